// Writes the README's TypeScript example to build/readme/example.ts, so the tests compile and run it as written.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const match = readme.match(/```ts\n([\s\S]*?)```/);
if (!match) {
  console.error("README.md has no ```ts example");
  process.exit(1);
}
mkdirSync(new URL("../build/readme/", import.meta.url), { recursive: true });
writeFileSync(new URL("../build/readme/example.ts", import.meta.url), match[1]);
