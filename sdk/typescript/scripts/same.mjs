// Fails when two files differ: the committed generated types against a fresh generation.
import { readFileSync } from "node:fs";

const [committed, fresh] = process.argv.slice(2);
if (readFileSync(committed, "utf8") !== readFileSync(fresh, "utf8")) {
  console.error(`${committed} is out of date with contracts/openapi.json: run npm run generate`);
  process.exit(1);
}
