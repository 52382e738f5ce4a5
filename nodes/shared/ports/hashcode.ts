/**
 * The one rule for an image hashcode, whether the service handed it out (an upload's answer, a
 * lookup, the known images) or a workflow gives it (Check Exists). The service's interface does not
 * show its format, so it is read as one token: letters and digits, then also `._~:+/=-` (base64 with
 * `/` and `+` passes, and is path-encoded where used). At most 128 characters: a longer "hashcode"
 * would be kept for days in the known images and in what an execution remembers. No `.` or `..`
 * between slashes, which a path would resolve as folders (`x/../../auth/me`). A message such as
 * "Image uploaded", an HTML page or a control character is never one.
 */
export const HASHCODE =
	/^(?=.{1,128}$)(?!(?:.*\/)?\.{1,2}(?:\/|$))[A-Za-z0-9][A-Za-z0-9._~:+/=-]*$/;

/**
 * The MD5 of an image file as the service keys images by it (Find, Skip Existing, Known MD5):
 * 32 lower-case hex digits; a value the workflow gives is lower-cased first.
 */
export const MD5 = /^[0-9a-f]{32}$/;
