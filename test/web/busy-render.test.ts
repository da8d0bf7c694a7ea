// Busy renders the same bytes however its reader is built: the page's markup
// for a fleet of odd work entries (not JSON, a payload as Sidekiq 6 writes it
// (an object) and as 7/8 write it (a string), no run_at, run_at first or
// inside the arguments, numeric thread ids, a 6.0 – 6.4.1 `:workers` hash,
// markup and long text in arguments), with the summary bar above it, is compared with busy-render.json,
// recorded from the renderer before Busy read work entries as bytes.
// BUSY_RENDER_RECORD=1 writes the file again (only to record a deliberate change).
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { useWebTestServer } from "./web-test-server.js";

const web = useWebTestServer();
const FILE = new URL("./busy-render.json", import.meta.url);
const NOW = 1_900_000_000;

const PATHS = [
  "/busy",
  "/busy?count=7&page=2",
  "/busy?only=jobs&count=5&page=3",
  "/busy?only=processes&process_count=3&process_page=2",
  "/busy?class=RareJob",
  "/busy?class=Mailer",
  "/busy?queue=odd",
  "/busy?host=web-1",
  "/busy?host=web-1&queue=even&class=CommonJob",
  "/busy?page=99&count=4",
];

type Hash = Record<string, string>;

/** A fleet whose hosts sort naturally (web-2 before web-10), with every odd work entry. */
function namedFleet(): Array<{ id: string; hash: Hash; work: Hash; workers?: Hash }> {
  const out: Array<{ id: string; hash: Hash; work: Hash; workers?: Hash }> = [];
  for (let p = 0; p < 8; p++) {
    const host = `web-${[1, 2, 10, 3][p % 4]}`;
    const id = `${host}:${200 + p}:${p.toString(16).padStart(12, "0")}`;
    const queue = p % 2 === 0 ? "even" : "odd";
    const info = JSON.stringify({
      hostname: host,
      started_at: NOW - 3600 - p * 97,
      pid: 200 + p,
      tag: p % 3 === 0 ? "app<b>" : "",
      concurrency: 5,
      queues: [queue, "default"],
      labels: p === 4 ? ["blue", "x&y"] : [],
      identity: id,
      version: p % 5 === 0 ? "7.3.2" : "8.1.7",
      embedded: p === 7,
    });
    const work: Hash = {};
    for (let t = 0; t < 4; t++) {
      const n = p * 4 + t;
      const job = {
        retry: true,
        queue,
        args: [n, { note: n % 4 === 0 ? `<script>alert("x")</script> & 'y'` : "plain", big: "9007199254740993" }],
        class: t === 0 ? "RareJob" : "CommonJob",
        jid: `j${String(n).padStart(23, "0")}`,
        created_at: NOW * 1000 - 5000,
      };
      // Ties on run_at across processes and threads; thread ids that look like numbers.
      const runAt = NOW - ((n * 37) % 50);
      const tid = t % 2 === 0 ? String(1000 - n) : `t${n.toString(36)}`;
      work[tid] =
        p % 4 === 3 && t === 1
          ? // Sidekiq 6: the payload as an object.
            JSON.stringify({ queue, payload: job, run_at: runAt })
          : JSON.stringify({ queue, payload: JSON.stringify(job), run_at: runAt });
    }
    if (p === 1) {
      work["bad"] = "{not json";
      work["norun"] = JSON.stringify({ queue, payload: JSON.stringify({ class: "NoRunAt", args: [], jid: "nr" }) });
      work["first"] = JSON.stringify({
        run_at: NOW - 7,
        queue,
        payload: JSON.stringify({ class: "RunAtFirst", args: ['"run_at":1'], jid: "rf" }),
      });
      work["inargs"] =
        `{"queue":"${queue}","payload":${JSON.stringify(JSON.stringify({ class: "InArgs", args: ['"run_at":5'], jid: "ia" }))}}`;
      work["float"] =
        `{"queue":"${queue}","payload":"{\\"class\\":\\"FloatRunAt\\",\\"args\\":[],\\"jid\\":\\"fr\\"}","run_at":${NOW - 3}.25}`;
      work["empty"] = "";
      work["strpay"] = JSON.stringify({ queue, payload: "not a job", run_at: NOW - 20 });
      work["nopay"] = JSON.stringify({ queue, run_at: NOW - 21 });
      work["long"] = JSON.stringify({
        queue,
        payload: JSON.stringify({ class: "LongArgs", args: ["é😀".repeat(400)], jid: "lg" }),
        run_at: NOW - 22,
      });
      work["aj"] = JSON.stringify({
        queue,
        payload: JSON.stringify({
          class: "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper",
          wrapped: "Mailer",
          args: [{ job_class: "Mailer", arguments: ["a@b.c"] }],
          jid: "aj",
        }),
        run_at: NOW - 23,
      });
      work["escq"] =
        `{"queue":"q\\"uote","payload":"{\\"class\\":\\"EscQueue\\",\\"jid\\":\\"eq\\"}","run_at":${NOW - 24}}`;
    }
    out.push({
      id,
      hash: {
        info,
        concurrency: "5",
        busy: String(Object.keys(work).length),
        beat: String(NOW - 1),
        quiet: p === 2 ? "true" : "false",
        rss: String(100_000 + p * 12_345),
        rtt_us: "40",
      },
      work,
    });
  }
  return out;
}

/** A member of `processes` whose hash has `busy` but no `info` (not pruned yet): the summary bar counts it, Busy's cards do not. */
function hashWithoutInfo(): { id: string; hash: Hash; work: Hash } {
  return { id: "gone:1:000000000000", hash: { busy: "3" }, work: {} };
}

/** A Sidekiq 6.x process without a hostname in `info` (Busy falls back to identity order) writing `:workers`. */
function oldProcess(): { id: string; hash: Hash; work: Hash; workers: Hash } {
  const id = "old-box:77:abcdef";
  return {
    id,
    hash: {
      info: JSON.stringify({ pid: 77, concurrency: 3, queues: ["odd"], labels: [], identity: id, tag: "" }),
      busy: "2",
      beat: String(NOW - 2),
      quiet: "false",
    },
    work: {},
    workers: {
      w1: JSON.stringify({ queue: "odd", payload: { class: "OldJob", args: [1], jid: "old1" }, run_at: NOW - 10 }),
      w2: JSON.stringify({ queue: "odd", payload: { class: "RareJob", args: [2], jid: "old2" }, run_at: NOW - 10 }),
    },
  };
}

async function seed(fleet: Array<{ id: string; hash: Hash; work: Hash; workers?: Hash }>): Promise<void> {
  await web.redis.flushdb();
  const pipe = web.redis.pipeline();
  // ProcessSet#cleanup's lock held, as within a minute of the last cleanup: a member without `info` stays.
  pipe.set("process_cleanup", "1", "EX", 60);
  for (const p of fleet) {
    pipe.sadd("processes", p.id);
    pipe.hset(p.id, p.hash);
    if (Object.keys(p.work).length > 0) pipe.hset(`${p.id}:work`, p.work);
    if (p.workers) pipe.hset(`${p.id}:workers`, p.workers);
  }
  await pipe.exec();
}

/** The summary bar and the page (the footer shows the runtime and Redis's port), CSRF tokens blanked. */
async function busySection(base: string, path: string): Promise<string> {
  const res = await fetch(`${base}${path}`);
  const body = await res.text();
  expect(res.status, path).toBe(200);
  const main = /<main>[\s\S]*<\/main>/.exec(body)?.[0];
  expect(main, path).toBeDefined();
  return main!.replace(/(name="authenticity_token" value=")[^"]*"/g, '$1"');
}

describe("Busy's markup", () => {
  it("is byte for byte what the text reader rendered, for odd entries and every view", async () => {
    const base = await web.serve({ apiOptions: { now: () => NOW * 1000 } });
    const got: Record<string, string> = {};
    await seed(namedFleet());
    for (const p of PATHS) got[`named ${p}`] = await busySection(base, p);
    await seed([...namedFleet(), oldProcess(), hashWithoutInfo()]);
    for (const p of PATHS.slice(0, 7)) got[`with a 6.x process ${p}`] = await busySection(base, p);
    if (process.env.BUSY_RENDER_RECORD === "1") writeFileSync(FILE, `${JSON.stringify(got, null, 1)}\n`);
    const want = JSON.parse(readFileSync(FILE, "utf8")) as Record<string, string>;
    expect(Object.keys(got)).toEqual(Object.keys(want));
    for (const k of Object.keys(want)) expect(got[k], k).toBe(want[k]);
  });
});
