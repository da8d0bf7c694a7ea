// Runs ruby-fixtures/capture.rb on one release: real Sidekiq writes every
// record kind, and we get them back as a capture document.
import type { SidekiqBackend } from "./backend.js";
import type { SidekiqTarget } from "./versions.js";

export interface CapturedRecord {
  kind: string;
  name: string;
  raw?: string;
  score?: string;
  key?: string;
  field?: string;
  hash?: Record<string, string>;
}

export interface CaptureDocument {
  sidekiq_version: string;
  ruby_version: string;
  captured_at: string;
  records: CapturedRecord[];
}

export async function capture(backend: SidekiqBackend, target: SidekiqTarget, db: number): Promise<CaptureDocument> {
  const r = await backend.runRuby(target, "capture.rb", [], {
    env: { REDIS_URL: backend.rubyRedisUrl(db) },
    timeoutMs: 180_000,
  });
  if (r.code !== 0) throw new Error(`capture.rb failed on Sidekiq ${target.version} (exit ${r.code}):\n${r.stderr}`);
  const doc = JSON.parse(r.stdout) as CaptureDocument;
  if (doc.sidekiq_version !== target.version) {
    throw new Error(`capture.rb ran Sidekiq ${doc.sidekiq_version}, expected ${target.version}`);
  }
  return doc;
}
