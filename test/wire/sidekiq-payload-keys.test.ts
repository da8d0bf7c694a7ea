// Sidekiq's payload keys are one list (src/core/wire/sidekiq-payload-keys.ts);
// the places that once spelled their own copy get from it what they had.
import { describe, expect, it } from "vitest";
import { splitObject } from "../../src/core/wire/json-scan.js";
import {
  isSidekiqPayloadKey,
  payloadKeysWrittenBy,
  SIDEKIQ_PAYLOAD_KEY_NAMES,
} from "../../src/core/wire/sidekiq-payload-keys.js";

const words = (s: string): string[] => s.trim().split(/\s+/);

describe("Sidekiq's payload keys", () => {
  it("are the keys the audit knows as Sidekiq's own, and CurrentAttributes' numbered ones", () => {
    const auditKnew = words(`class args queue jid created_at enqueued_at at retry retry_count retry_for
      retry_queue failed_at retried_at discarded_at error_message error_class error_backtrace backtrace
      dead tags wrapped log_level display_class profile cattr`);
    expect([...SIDEKIQ_PAYLOAD_KEY_NAMES].sort()).toEqual(auditKnew.sort());
    expect(isSidekiqPayloadKey("cattr_2")).toBe(true);
    expect(isSidekiqPayloadKey("cattr_x")).toBe(false);
    expect(isSidekiqPayloadKey("lock_digest")).toBe(false);
    expect(isSidekiqPayloadKey("__proto__")).toBe(false);
    expect(isSidekiqPayloadKey("toString")).toBe(false);
  });

  it("hold every key Sidekiq's Web UI shows itself (web/helpers.rb RETRY_JOB_KEYS)", () => {
    const webUi = words(`queue class args retry_count retried_at failed_at jid error_message error_class
      backtrace error_backtrace enqueued_at retry wrapped created_at tags display_class`);
    expect(webUi.filter((k) => !isSidekiqPayloadKey(k))).toEqual([]);
  });

  it("give sidekiq-throttled's requeue what a new push makes anew or drops: no more, no less", () => {
    const requeueDropped = words(`class args queue jid created_at enqueued_at at retry_count retried_at
      failed_at error_message error_class error_backtrace`);
    expect([...payloadKeysWrittenBy("push", "stamp", "retry")].sort()).toEqual(requeueDropped.sort());
  });

  it("hold every Sidekiq key the payload scanner interned, and the scanner splits each one right", () => {
    const scannerInterned = words(`retry queue args class jid created_at enqueued_at wrapped retry_count
      retried_at failed_at error_message error_class error_backtrace backtrace at tags dead cattr`);
    expect(scannerInterned.filter((k) => !isSidekiqPayloadKey(k))).toEqual([]);
    // Keys sharing a first character, a length or a prefix come back as themselves.
    const keys = [...SIDEKIQ_PAYLOAD_KEY_NAMES, "bid", "lock", "lock_args", "retry_", "retr", "rxtry", "x"];
    const text = `{${keys.map((k, i) => `"${k}":${i}`).join(",")}}`;
    expect(splitObject(text).map((m) => m.key)).toEqual(keys);
  });
});
