/**
 * How an operation's error reaches the user. The dynamic-provider host prints an error of check, diff and delete
 * itself (`${e}: ${e.stack}`) beside the engine's own report of it, so a message for the user (a cancelled destroy,
 * a connection to another cluster) showed twice, joined by `: Error:` and followed by the provider's frames.
 */

/**
 * Rethrows `error` without its stack when it is a message for the user; a programming error (TypeError and the
 * like) keeps its frames, which are what a bug report needs.
 */
export function failForTheUser(error: unknown): never {
  const bug = [TypeError, RangeError, ReferenceError, SyntaxError].some((type) => error instanceof type);
  if (error instanceof Error && !bug) error.stack = "";
  throw error;
}
