import type { IPollFunctions } from 'n8n-workflow';

import type { Freshness } from '../shared/sharedAnswers';
import { sharedAnswer } from '../shared/sharedAnswers';
import type { CustomerOverride } from '../shared/transport';
import { listUploads } from '../shared/uploads';
import type { UploadRecord } from './records';
import { followableRecords } from './records';
import { warnAboutSkippedIds } from './skippedIds';
import type { PendingSession } from './state';

/** A date's records, and when the service was asked for them: they hold what it had then. */
export interface Listing {
	records: UploadRecord[];
	askedAt: number;
}

/**
 * The listings of one poll: each date is listed at most once, and a finished session's record is
 * read from its date's listing (the state does not keep records). A listing another trigger of the
 * account and customer node asked for is taken when it is as fresh as `freshness` asks.
 */
export class Listings {
	private readonly byDay = new Map<string, Map<string, UploadRecord>>();

	constructor(
		private readonly context: IPollFunctions,
		private readonly customer: CustomerOverride | undefined,
		private readonly freshness: Freshness,
	) {}

	async list(day: string): Promise<Listing> {
		const { value, askedAt } = await sharedAnswer(
			this.context,
			this.customer,
			['listing', day],
			this.freshness,
			async () => await listUploads(this.context, day, { customer: this.customer }),
		);
		const { records, skippedIds } = followableRecords(value);
		warnAboutSkippedIds(this.context.logger, skippedIds);
		this.byDay.set(day, new Map(records.map((record) => [record.id, record])));
		return { records, askedAt };
	}

	/** The session's record in this poll's listings, its date listed if it was not; a bare record if the service no longer lists it. */
	async recordOf(session: PendingSession): Promise<UploadRecord> {
		for (const records of this.byDay.values()) {
			const record = records.get(session.id);
			if (record) return record;
		}
		if (!this.byDay.has(session.day)) {
			try {
				const record = (await this.list(session.day)).records.find(
					(candidate) => candidate.id === session.id,
				);
				if (record) return record;
			} catch (error) {
				// The outcome is known: a listing that fails costs the record's details, not the event.
				this.context.logger.warn(
					`The uploads of ${session.day} could not be listed again: ${(error as Error).message}`,
				);
			}
		}
		return { id: session.id, listedDate: session.day };
	}
}
