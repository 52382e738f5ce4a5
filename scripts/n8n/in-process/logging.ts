// One recorder stands in for n8n's Logger (Container) and LoggerProxy (n8n-workflow), so tests can
// read every line n8n or a node logged.
import { inspect } from 'node:util';

import type { LogMetadata, Logger as LoggerType } from 'n8n-workflow';

const loggedLines: string[] = [];

export class RecordingLogger implements LoggerType {
	error(message: string, metadata?: LogMetadata) {
		this.record('error', message, metadata);
	}

	warn(message: string, metadata?: LogMetadata) {
		this.record('warn', message, metadata);
	}

	info(message: string, metadata?: LogMetadata) {
		this.record('info', message, metadata);
	}

	debug(message: string, metadata?: LogMetadata) {
		this.record('debug', message, metadata);
	}

	scoped() {
		return this;
	}

	private record(level: string, message: string, metadata?: LogMetadata) {
		// inspect rather than JSON: metadata often holds errors (with circular request objects),
		// and a secret hidden deep in one must still show up here.
		const rendered =
			metadata === undefined ? '' : ` ${inspect(metadata, { depth: 12, breakLength: Infinity })}`;
		loggedLines.push(`${level}: ${message}${rendered}`);
	}
}

export function getLoggedLines(): string[] {
	return [...loggedLines];
}

export function clearLoggedLines(): void {
	loggedLines.length = 0;
}
