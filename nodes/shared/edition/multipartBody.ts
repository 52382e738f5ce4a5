/*
 * Multipart bodies for the full edition: streamed from n8n's binary store as the request is sent
 * (../fullEdition/streamedMultipart.ts). The verified edition (n8n Cloud, which allows neither
 * `stream` nor runtime dependencies) is built with ./multipartBody.verified.ts in its place: the
 * same exports, the body built in memory.
 */

export { digestOf, encodeMultipart } from '../fullEdition/streamedMultipart';
