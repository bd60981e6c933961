// Server-Sent Events: an incremental parser of text/event-stream lines, and the event it yields.

/** One event of a world's stream: `seq` (also its SSE id), `type` and the stored `envelope`. */
export interface StreamEvent {
  seq: number;
  type: string;
  envelope: Envelope;
}

/** An event as it is stored (see GET /v1/worlds/{id}/events). */
export interface Envelope {
  event_id: string;
  type: string;
  world_id: string;
  npc_id?: string | null;
  world_time: string;
  causation_id?: string | null;
  payload: Record<string, unknown>;
  [key: string]: unknown;
}

/** Feed it lines without their line endings; it returns a StreamEvent at the blank line ending one. */
export class SSEParser {
  lastId: string | null = null;
  private event = "";
  private data: string[] = [];
  private id: string | null = null;

  feed(line: string): StreamEvent | null {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "data") this.data.push(value);
    else if (name === "event") this.event = value;
    else if (name === "id" && !value.includes("\0")) this.id = value;
    return null;
  }

  private dispatch(): StreamEvent | null {
    const data = this.data.join("\n");
    const { event, id } = this;
    this.data = [];
    this.event = "";
    this.id = null;
    if (id !== null) this.lastId = id;
    if (data === "") return null;
    const envelope = JSON.parse(data) as Envelope;
    const seq = id !== null && /^\d+$/.test(id) ? Number(id) : 0;
    return { seq, type: event || envelope.type, envelope };
  }
}

/** Splits a byte stream into lines (LF, CRLF or CR), keeping a partial line until its end arrives. */
export async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      // A trailing CR may be the first half of a CRLF: keep it until the next chunk says.
      const held = buffer.endsWith("\r") ? "\r" : "";
      const parts = (held ? buffer.slice(0, -1) : buffer).split(/\r\n|\r|\n/);
      buffer = (parts.pop() ?? "") + held;
      yield* parts;
    }
  } finally {
    reader.releaseLock();
  }
}
