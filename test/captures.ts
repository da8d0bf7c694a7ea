// Loads the golden records real Sidekiq wrote (ruby-fixtures/captures/*.json).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export interface CapturedRecord {
  kind: string;
  name: string;
  raw?: string;
  score?: string;
  key?: string;
  field?: string;
  hash?: Record<string, string>;
}
export interface Capture {
  sidekiq_version: string;
  ruby_version: string;
  records: CapturedRecord[];
}

export const CAPTURE_DIR = fileURLToPath(new URL("../ruby-fixtures/captures/", import.meta.url));

export function loadCaptures(dir = CAPTURE_DIR): Capture[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as Capture);
}
