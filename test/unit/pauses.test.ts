import { mapWithPauses, pause } from '../../nodes/shared/pauses';
import { clockMovingPerRead, timerTurnsDuring } from '../helpers/pauses';

describe('long loops pause every 50 ms', () => {
	beforeEach(clockMovingPerRead);
	afterEach(() => jest.restoreAllMocks());

	it('pauses within a loop after 50 ms of work', async () => {
		await pause();
		const { turns } = await timerTurnsDuring(
			async () => await mapWithPauses(Array.from({ length: 1_000 }), () => undefined),
		);
		expect(turns).toBeGreaterThanOrEqual(10);
	});

	it('counts from the last pause, not from the start of the loop: two short loops in a row pause', async () => {
		await pause();
		const { turns } = await timerTurnsDuring(async () => {
			await mapWithPauses(Array.from({ length: 30 }), () => undefined);
			await mapWithPauses(Array.from({ length: 30 }), () => undefined);
		});
		expect(turns).toBeGreaterThanOrEqual(1);
	});
});
