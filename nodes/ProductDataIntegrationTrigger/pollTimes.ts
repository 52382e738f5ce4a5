import { DAY_MS, HOUR_MS, MINUTE_MS } from '../shared/time';

/** The "Poll Times" parameter n8n adds to every polling trigger. */
interface PollTime {
	mode?: string;
	value?: number;
	unit?: string;
}

function intervalOf(time: PollTime): number | undefined {
	switch (time.mode) {
		case 'everyMinute':
			return MINUTE_MS;
		case 'everyHour':
			return HOUR_MS;
		case 'everyX': {
			const value = Number(time.value);
			if (!Number.isFinite(value) || value <= 0) return undefined;
			return value * (time.unit === 'minutes' ? MINUTE_MS : HOUR_MS);
		}
		case 'everyDay':
			return DAY_MS;
		case 'everyWeek':
			return 7 * DAY_MS;
		case 'everyMonth':
			return 28 * DAY_MS;
		default:
			// A custom cron expression: its interval is not read here.
			return undefined;
	}
}

/** The shortest time between two polls that the Poll Times ask for, when it can be told. */
export function pollIntervalMs(pollTimes: unknown): number | undefined {
	const items = (pollTimes as { item?: unknown } | undefined)?.item;
	if (!Array.isArray(items) || items.length === 0) return undefined;
	const intervals = (items as PollTime[]).map(intervalOf);
	if (intervals.some((interval) => interval === undefined)) return undefined;
	return Math.min(...(intervals as number[]));
}

/**
 * How long one poll may run: within n8n's budget for a poll, and over before the next poll is due,
 * so a poll held up by the network never makes the next one skip.
 */
export function pollDeadlineMs(budgetMs: number, pollTimes: unknown): number {
	const interval = pollIntervalMs(pollTimes);
	if (interval === undefined) return budgetMs;
	return Math.min(budgetMs, Math.max(interval - 5_000, interval / 2));
}
