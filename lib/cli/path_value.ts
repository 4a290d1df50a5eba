/**
 * The value parser of every flag or argument that names a path (a file, a folder, a record, or a
 * URL path). An empty value names no path: `--out=` or `--out ""` would otherwise resolve to the
 * current folder (and be refused as "a folder, not a file", or written there), and an empty
 * `--plan` read "cannot read : EISDIR". It is refused while parsing, naming the flag (exit 64).
 * @module
 */
import { message, text } from "@optique/core/message";
import type { NonEmptyString } from "@optique/core/nonempty";
import { string, type ValueParser } from "@optique/core/valueparser";

const WORDS: Record<string, string> = { FILE: "file", DIR: "folder", PATH: "path" };

/**
 * A string value that is not empty.
 * @param metavar what the help shows (FILE, DIR, PATH, ...)
 * @param what what the error asks for (default: FILE a file, DIR a folder, PATH a path, else the
 *   metavar in lower case)
 */
export function pathValue(metavar: NonEmptyString, what: string = WORDS[metavar] ?? metavar.toLowerCase().split("|").join(" or ").replace(/_/g, " ")): ValueParser<"sync", string> {
  return string({ metavar, pattern: /^[\s\S]/, errors: { patternMismatch: message`is empty: give a ${text(what)}` } });
}
