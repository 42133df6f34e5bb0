/**
 * A byte stream split into its lines as it arrives: a watch response is one JSON event per line. Linear in the bytes
 * received: each chunk is decoded once and searched for newlines once, and the pieces of an unfinished line wait in
 * an array joined once when its newline comes. Appending to one string and searching it whole on every chunk costs
 * the square of a line's length over the chunk size instead: an event of a 1.2 MB object (which the apiserver accepts)
 * in 16 KiB chunks took ~25 ms of CPU that way, ~2.4 ms this way with its JSON.parse.
 */
export class LineSplitter {
  /** Streaming, so a multi-byte character cut between two chunks is decoded whole. */
  private readonly decoder = new TextDecoder();
  /** The text received since the last newline. */
  private pieces: string[] = [];

  /** The next chunk of the stream; the lines it completes, without their "\n" (a "\r" before it is kept). */
  push(chunk: Uint8Array): string[] {
    const text = this.decoder.decode(chunk, { stream: true });
    const lines: string[] = [];
    let from = 0;
    for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", from)) {
      const tail = text.slice(from, newline);
      if (this.pieces.length === 0) {
        lines.push(tail);
      } else {
        this.pieces.push(tail);
        lines.push(this.pieces.join(""));
        this.pieces = [];
      }
      from = newline + 1;
    }
    if (from < text.length) this.pieces.push(text.slice(from));
    return lines;
  }
}
