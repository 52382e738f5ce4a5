import type { SharedAnswerHome } from '../keptAnswers';

/*
 * Where the pollers' shared answers are kept for every process, for the verified edition (n8n
 * Cloud), built in place of ./answerHome.ts: nowhere, since n8n's rules for verified packages allow
 * no Redis client. Each process shares them within itself.
 */
export const sharedAnswerHome: SharedAnswerHome | undefined = undefined;
