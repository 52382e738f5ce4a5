/** What a hashcode looks like: one token (a message such as "Image uploaded" or an HTML page is not one). */
export const HASHCODE = /^[A-Za-z0-9][A-Za-z0-9._~:+/=-]*$/;
