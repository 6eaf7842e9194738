// Paths the Node entry points read, as speechattn/files.py reads them: a device or a pipe is refused in one line
// (/dev/zero never ends, a FIFO nobody writes to waits forever), a regular file is read with a bound in bytes, text
// is UTF-8 or refused.  Errors are InputErrors whose message names the path; each entry point prints it in one line.
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from "node:fs";

export const MAX_TEXT_BYTES = 50_000_000; // a script, a dictionary, a JSON table (speechattn/runtime/align.py's bound)
export const MAX_MODEL_BYTES = 2_000_000_000; // an ONNX file is one protobuf message: 2 GB at most

export class InputError extends Error {
  constructor(message, code = null) {
    super(message);
    this.code = code; // the system's code (ENOENT ...) where there was one
  }
}

const aFile = (what) => (what === "audio" ? "a WAV file" : `a ${what} file`);

function refusal(path, what, status) {
  if (status.isDirectory()) return new InputError(`${path}: a directory, not ${aFile(what)}`);
  const kind = status.isFIFO() || status.isSocket() ? "a pipe" : "a device";
  return new InputError(`${path}: ${kind}, not a file; give the ${what} as a file`);
}

// A descriptor of the regular file at `path` (the caller closes it).  Refused by name before it is opened (opening
// a device may do something), and opened without blocking and checked again: a FIFO put there meanwhile is refused,
// not waited on.
export function openRegular(path, what) {
  if (path === "") throw new InputError(`the ${what} path is empty`, "ENOENT");
  let descriptor;
  try {
    const status = statSync(path);
    if (!status.isFile()) throw refusal(path, what, status);
    descriptor = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if (error instanceof InputError) throw error;
    const reason = error.code === "ENOENT" ? "no such file" : `cannot read (${error.code ?? error.message})`;
    throw new InputError(`${path}: ${reason}`, error.code);
  }
  const status = fstatSync(descriptor);
  if (!status.isFile()) {
    closeSync(descriptor);
    throw refusal(path, what, status);
  }
  return descriptor;
}

// A regular file's bytes, at most maxBytes (more is an error naming the file, found from its size before a byte is
// read, or while reading one that grows).
export function readBounded(path, what, maxBytes) {
  const descriptor = openRegular(path, what);
  const tooBig = () => new InputError(`${path}: more than ${maxBytes / 1e6} MB, too big for ${aFile(what)}`);
  try {
    const size = fstatSync(descriptor).size;
    if (size > maxBytes) throw tooBig();
    const pieces = [];
    let total = 0;
    for (;;) { // the size, then whatever a growing file (or one that reports no size, as /proc's) adds
      const piece = Buffer.allocUnsafe(Math.min(Math.max(size - total, 0) + 65536, maxBytes + 1 - total));
      const got = readSync(descriptor, piece, 0, piece.length, null);
      if (got === 0) break;
      pieces.push(piece.subarray(0, got));
      total += got;
      if (total > maxBytes) throw tooBig();
    }
    return pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, total);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`${path}: cannot read (${error.code ?? error.message})`, error.code);
  } finally {
    closeSync(descriptor);
  }
}

// UTF-8 bytes as text (a byte-order mark dropped), or one line naming the file and the first byte that is not UTF-8
export function decodeUtf8(bytes, path) {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    const at = firstInvalidByte(bytes);
    throw new InputError(`${path}: not UTF-8 text (byte ${at}: 0x${bytes[at].toString(16).padStart(2, "0")}); ` +
      "save it as UTF-8");
  }
}

// where the lenient decoder put its first U+FFFD that the bytes do not spell themselves (EF BF BD)
function firstInvalidByte(bytes) {
  const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
  let at = 0, from = 0;
  for (let i = text.indexOf("\ufffd"); i >= 0; i = text.indexOf("\ufffd", i + 1)) {
    at += Buffer.byteLength(text.slice(from, i));
    from = i;
    if (!(bytes[at] === 0xef && bytes[at + 1] === 0xbf && bytes[at + 2] === 0xbd)) return at;
  }
  return 0; // not reached: the strict decoder failed somewhere
}

export const readUtf8 = (path, what, maxBytes = MAX_TEXT_BYTES) => decodeUtf8(readBounded(path, what, maxBytes), path);

// A JSON file (the check scripts' vectors) or one line on stderr and exit 1
export function readJsonOrExit(path, what) {
  try {
    return JSON.parse(readUtf8(path, what));
  } catch (error) {
    console.error(`error: ${error instanceof InputError ? error.message : `${path}: not a ${what} file (${error.message})`}`);
    process.exit(1);
  }
}
