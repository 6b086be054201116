/** A write error that means the reader went away (`stepbox show EP | head`), not a failure of ours. */
const READER_GONE = new Set(['EPIPE', 'ERR_STREAM_DESTROYED']);

/**
 * Lets the CLI outlive a reader that closed its end of a pipe: `stepbox show EP | head` printed
 * an unhandled `write EPIPE` with its stack and exited 1. The stream's error is taken as the
 * reader's choice: the rest of the output is dropped (the stream is destroyed, writes go
 * nowhere) and the command carries on to its own end and exit code, so a `stepbox run … | head`
 * still finishes its episode and writes its trace (nothing is lost). Any other write error is
 * still thrown.
 */
export function outliveClosedReader(stream: NodeJS.WritableStream): void {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (READER_GONE.has(e.code ?? '')) return;
    throw e;
  });
}
