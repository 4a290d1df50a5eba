/**
 * Words of a command line: a POSIX-shell split without expansion, and flag lookups over argv in
 * both spellings (`--flag VALUE`, `--flag=VALUE`). Shared by the commands that take another
 * command's flags (`bench rounds --serve-args`, `bench points` client_argv).
 * @module
 */
import { usageError } from "./errors.ts";

/**
 * Splits a command line the way a POSIX shell would, without expanding anything: whitespace
 * separates words, '…' is literal, "…" keeps spaces and honours \\ \" \$ \`, a backslash outside
 * quotes escapes the next character.
 * @throws IkError (64) naming `flag` on an unterminated quote
 */
export function shellSplit(text: string, flag = "--serve-args"): string[] {
  const out: string[] = [];
  let word = "";
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw usageError(flag, "has an unterminated ' quote", "close the quote");
      word += text.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      inWord = true;
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === "\\" && j + 1 < text.length && '\\"$`'.includes(text[j + 1])) j++;
        word += text[j];
      }
      if (j >= text.length) throw usageError(flag, 'has an unterminated " quote', "close the quote");
      i = j;
    } else if (c === "\\") {
      if (i + 1 < text.length) word += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) out.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) out.push(word);
  return out;
}

/** `words` without every `flag VALUE` and `flag=VALUE`. */
export function dropFlag(words: readonly string[], flag: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    if (words[i] === flag) i++;
    else if (!words[i].startsWith(flag + "=")) out.push(words[i]);
  }
  return out;
}

/** The last value given to `flag` (`flag VALUE` or `flag=VALUE`), else null. */
export function flagValue(words: readonly string[], flag: string): string | null {
  let found: string | null = null;
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    const eq = w.indexOf("=");
    const name = eq < 0 ? w : w.slice(0, eq);
    if (name === flag) found = eq >= 0 ? w.slice(eq + 1) : (words[i + 1] ?? "");
  }
  return found;
}

/** Whether `flag` appears at all (as `flag` or `flag=…`). */
export function hasFlag(words: readonly string[], flag: string): boolean {
  return words.some((w) => w === flag || w.startsWith(flag + "="));
}

