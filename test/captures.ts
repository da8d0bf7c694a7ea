// Loads the golden records real Sidekiq wrote (ruby-fixtures/captures/*.json).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import type { CaptureDocument, CapturedRecord } from "../harness/capture.js";

// The capture format is defined where capture.rb's output is read.
export type { CapturedRecord };
export type Capture = CaptureDocument;

export const CAPTURE_DIR = fileURLToPath(new URL("../ruby-fixtures/captures/", import.meta.url));

export function loadCaptures(dir = CAPTURE_DIR): Capture[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as Capture);
}
