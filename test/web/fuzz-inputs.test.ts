// Seeded fuzzing of the dashboard's inputs through its public handler:
// hostile query parameters, path segments, filters, form posts and
// sorted-set entry keys. No request may answer 5xx, no hostile text may come
// back unescaped, and a POST may act on the entry it names and on no other.
import type { Redis } from "ioredis";
import { beforeAll, describe, expect, it } from "vitest";
import { Rng } from "../../chaos/fuzz/prng.js";
import { HOSTILE_TEXT, PROBE } from "../support/hostile-inputs.js";
import { useWebTestServer } from "./web-test-server.js";

const web = useWebTestServer();
let redis: Redis;
beforeAll(() => {
  redis = web.redis;
});

const HOSTILE = [...HOSTILE_TEXT, `"><fz-x>`, `'><fz-x>`, "javascript:alert(1)", "%", "1900000000.5-j1"];
const PARAMS = [
  "page",
  "count",
  "substr",
  "direction",
  "poll",
  "period",
  "class",
  "queue",
  "filter",
  "jid",
  "key",
  "days",
];
const PAGES = ["/", "/busy", "/queues", "/retries", "/scheduled", "/morgue", "/metrics"];
const SEGMENT_PAGES = ["/queues/", "/retries/", "/scheduled/", "/morgue/", "/metrics/"];

/** Retry entries: two share a score, one jid is a prefix of another, values carry the probe. */
const ENTRIES: Array<[string, Record<string, unknown>]> = [
  ["1900000000.5", { class: "HardJob", args: [PROBE], jid: "j1", queue: "default", error_message: PROBE }],
  ["1900000000.5", { class: "HardJob", args: [2], jid: "j2", queue: "default", error_message: "boom" }],
  ["1900000001.25", { class: `${PROBE}Job`, args: [{ k: PROBE }], jid: "ab", queue: PROBE, error_message: "x" }],
  ["1900000002", { class: "HardJob", args: [], jid: "abc", queue: "default", error_message: "y" }],
  ["1900000003.75", { class: "HardJob", args: ["\u2028"], queue: "default", error_message: "no jid" }],
];
const KEYS = ["1900000000.5-j1", "1900000000.5-j2", "1900000001.25-ab", "1900000002-abc", "1900000003.75-"];

async function seed(): Promise<void> {
  await redis.flushdb();
  const tx = redis.multi();
  for (const [score, job] of ENTRIES)
    tx.zadd("retry", score, JSON.stringify(job)).zadd("dead", score, JSON.stringify(job));
  tx.zadd("schedule", "1900000009.5", JSON.stringify({ class: PROBE, args: [PROBE], jid: "s1", queue: "default" }));
  tx.sadd("queues", "default", PROBE).lpush(
    `queue:${PROBE}`,
    JSON.stringify({ class: PROBE, args: [PROBE], jid: "q1" }),
  );
  await tx.exec();
}

function randomQuery(r: Rng): string {
  const q = new URLSearchParams();
  for (let i = r.int(4); i > 0; i--) q.append(r.pick(PARAMS), r.pick(HOSTILE));
  const s = q.toString();
  return s ? `?${s}` : "";
}

function randomPath(r: Rng): string {
  if (r.chance(0.5)) return r.pick(PAGES);
  const seg = r.pick(HOSTILE);
  // Some segments raw (a lone % included), most encoded as a browser would.
  return (
    r.pick(SEGMENT_PAGES) +
    (r.chance(0.2) ? seg.replace(/[/?#\s\u0000-\u001f]/g, "") || "x" : encodeURIComponent(seg || "x"))
  );
}

/** A key that names an entry, one that almost does, or junk. */
function randomKey(r: Rng): string {
  const k = r.pick(KEYS);
  switch (r.int(6)) {
    case 0:
      return k.slice(0, -1);
    case 1:
      return `${k}x`;
    case 2:
      return k.replace(/^1/, "2");
    case 3:
      return r.pick(HOSTILE);
    default:
      return k;
  }
}

describe("dashboard inputs, fuzzed (seeded)", () => {
  it("never answers 5xx, and never echoes hostile text unescaped, over 200 GETs", async () => {
    await seed();
    const base = await web.serve();
    const r = new Rng(20261126);
    for (let i = 0; i < 200; i++) {
      const url = `${base}${randomPath(r)}${randomQuery(r)}`;
      const res = await fetch(url, { redirect: "manual" });
      const body = await res.text();
      expect(res.status, url).toBeLessThan(500);
      expect(body.includes("<fz-x"), `${url} echoes the probe unescaped`).toBe(false);
    }
  }, 60_000);

  it("a POST on selected keys acts on exactly the entries those keys name, over 100 posts", async () => {
    const base = await web.serve();
    const r = new Rng(1126);
    for (let i = 0; i < 100; i++) {
      await seed();
      const page = await fetch(`${base}/retries`);
      const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0]!;
      const token = /name="authenticity_token" value="([^"]+)"/.exec(await page.text())?.[1] ?? "";
      const keys = Array.from({ length: 1 + r.int(2) }, () => randomKey(r));
      const action = r.pick(["retry", "add-to-queue", "kill", "delete", PROBE, ""]);
      const before = await redis.zrange("retry", 0, -1, "WITHSCORES");
      const form = new URLSearchParams({ authenticity_token: token, action });
      for (const k of keys) form.append("key", k);
      const res = await fetch(`${base}/retries/selected`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie, origin: base },
        body: form.toString(),
      });
      const what = `${action} on ${JSON.stringify(keys)}`;
      expect(res.status, what).toBeLessThan(500);
      expect((await res.text()).includes("<fz-x"), what).toBe(false);
      const after = await redis.zrange("retry", 0, -1, "WITHSCORES");
      // The entries the keys name exactly ("<score>-<jid>", the score as Redis printed it).
      const named = new Set(keys.filter((k) => KEYS.includes(k)));
      const expected: string[] = [];
      const valid = ["retry", "add-to-queue", "kill", "delete"].includes(action);
      for (let j = 0; j < before.length; j += 2) {
        const job = JSON.parse(before[j]!) as { jid?: string };
        const key = `${before[j + 1]}-${job.jid ?? ""}`;
        if (!(valid && named.has(key))) expected.push(before[j]!, before[j + 1]!);
      }
      expect(after, what).toEqual(expected);
    }
  }, 120_000);
});
