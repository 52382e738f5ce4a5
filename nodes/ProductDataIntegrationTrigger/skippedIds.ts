import type { Logger } from 'n8n-workflow';

/** Ids warned about are remembered up to this many (the oldest is forgotten first). */
const REMEMBERED_IDS = 500;
/** At most this many ids are named in one poll's warnings; the rest are counted. */
const NAMED_PER_POLL = 10;
const SHOWN_CHARS = 80;

// Process-wide: a record that keeps being listed is warned about once, not on every poll.
const warned = new Set<string>();

function shown(id: unknown): string {
	const text = JSON.stringify(id) ?? String(id);
	return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}...` : text;
}

/**
 * Warns about listed records whose id is not a session id (they are not followed): once per id,
 * and for few ids per poll, so that a service listing many such records cannot flood the log.
 */
export function warnAboutSkippedIds(logger: Logger, ids: unknown[]): void {
	const unwarned = [...new Set(ids.map(shown))].filter((id) => !warned.has(id));
	for (const id of unwarned) {
		if (warned.size >= REMEMBERED_IDS) warned.delete(warned.values().next().value as string);
		warned.add(id);
	}
	for (const id of unwarned.slice(0, NAMED_PER_POLL)) {
		logger.warn(`An upload listed with the id ${id} is not followed: that is not a session id`);
	}
	if (unwarned.length > NAMED_PER_POLL) {
		logger.warn(
			`${unwarned.length - NAMED_PER_POLL} more uploads listed with ids that are not session ids are not followed`,
		);
	}
}
