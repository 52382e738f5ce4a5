/**
 * Makes the clock move on 1 ms each time it is read (until jest.restoreAllMocks()), so that a loop
 * that pauses after 50 ms of work pauses after at most 50 steps, however fast the machine.
 */
export function clockMovingPerRead(): void {
	let now = Date.now();
	jest.spyOn(Date, 'now').mockImplementation(() => ++now);
}

/** How often a timer armed before `work` runs until `work` is done: never for a loop in one piece. */
export async function timerTurnsDuring<T>(
	work: () => Promise<T>,
): Promise<{ result: T; turns: number }> {
	let turns = 0;
	let running = true;
	const turn = () => {
		if (!running) return;
		turns++;
		setTimeout(turn, 0);
	};
	setTimeout(turn, 0);
	try {
		return { result: await work(), turns };
	} finally {
		running = false;
	}
}
