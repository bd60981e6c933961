// What the live tests share: the gateway they talk to (NPCWORLD_URL, NPCWORLD_API_KEY, set by the Python
// suite's tests/e2e/sdk) and fresh ids.
import { randomUUID } from "node:crypto";
import { Client, type ClientOptions } from "npcworld-sdk";

export const URL_ = process.env.NPCWORLD_URL ?? "";
export const KEY = process.env.NPCWORLD_API_KEY ?? "";
if (!URL_ || !KEY) {
  throw new Error("the live tests need NPCWORLD_URL and NPCWORLD_API_KEY (a running gateway and an admin key)");
}
export const TOWN = "brindle-hollow";
export const T0 = "2023-02-13T07:00:00+00:00";
export const MORNING = "2023-02-13T08:00:00+00:00";

export const newId = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

export function client(options: ClientOptions = {}): Client {
  return new Client({ baseUrl: URL_, apiKey: KEY, ...options });
}

export async function world(sdk: Client, ...npcs: string[]): Promise<string> {
  const worldId = newId("w");
  await sdk.createWorld({ name: "Brindle Hollow", start_time: T0, world_id: worldId });
  for (const npc of npcs) await sdk.createNpc(worldId, { npc_id: npc, name: npc });
  return worldId;
}

/** Calls `probe` until `until` holds, for at most `timeoutS` seconds. */
export async function eventually<R>(probe: () => Promise<R>, until: (r: R) => boolean, timeoutS = 30): Promise<R> {
  const deadline = Date.now() + timeoutS * 1000;
  for (;;) {
    const result = await probe();
    if (until(result)) return result;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutS} s: ${JSON.stringify(result)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function take<E>(source: AsyncIterable<E>, n: number): Promise<E[]> {
  const out: E[] = [];
  if (n <= 0) return out;
  for await (const item of source) {
    out.push(item);
    if (out.length === n) break;
  }
  return out;
}
