// Node -> Ruby: Node's client pushes each generated job; Ruby's client pushes
// the same job on another database. Node's bytes must be Ruby's (times and
// jid by rule), Ruby's API must read the same arguments from both (and the
// ones the generator meant, type for type), the Web UI's queue pages must be
// the same, and a real worker must perform every Node-written job with those
// arguments.
import type { Redis } from "ioredis";
import { Client } from "../../src/core/client/client.js";
import type { PushItem } from "../../src/core/client/normalize.js";
import { profileForVersion } from "../../src/core/wire/dialect.js";
import { JobRecord } from "../../src/core/wire/job-record.js";
import { RubyFloat, type RubyJsonValue } from "../../src/core/wire/ruby-json.js";
import { compareRecords, floatsAsToS } from "./compare.js";
import { caseText, field, FUZZ_QUEUES, type FuzzCase } from "./generator.js";
import { oracle, type FuzzRig } from "./rig.js";
import type { RubyView } from "./ruby-to-node.js";
import { show, type Mismatch } from "./report.js";

/** What Ruby's FuzzCanon.canon gives for a value Ruby parsed from this one's JSON. */
export function canon(v: RubyJsonValue | undefined): unknown {
  if (v === null || v === undefined) return ["N"];
  if (v === true) return ["T"];
  if (v === false) return ["B"];
  if (typeof v === "bigint" || typeof v === "number") return ["I", String(v)];
  if (v instanceof RubyFloat) {
    const b = Buffer.alloc(8);
    b.writeDoubleBE(v.value);
    return ["F", b.toString("hex")];
  }
  if (typeof v === "string") return ["S", v];
  if (Array.isArray(v)) return ["A", v.map(canon)];
  if (typeof v === "object" && !("text" in v && Object.keys(v).length === 0))
    return ["H", Object.entries(v).map(([k, x]) => [k, canon(x)])];
  throw new Error(`no canonical form for ${String(v)}`);
}

interface Performed {
  jid: string;
  args: unknown;
  error: string | null;
}

function unescapeHtml(s: string): string {
  return s.replace(/&(quot|amp|lt|gt|#39|#x27);/g, (_m, e: string) =>
    e === "quot" ? '"' : e === "amp" ? "&" : e === "lt" ? "<" : e === "gt" ? ">" : "'",
  );
}

/** The job table of a Web UI queue page, with each case's jid and clock-written times made neutral. */
function jobTable(body: string, jids: Map<string, number>): string {
  const start = body.indexOf("<table");
  const end = body.lastIndexOf("</table>");
  let t = start < 0 ? "" : body.slice(start, end);
  // The job's JSON in the delete form: its Floats compared by value (Ruby's json 2.10+ spells them its own way).
  t = t.replace(/value="(\{&quot;[^"]*)"/g, (_m, v: string) => `value="${floatsAsToS(unescapeHtml(v))}"`);
  t = t.replace(/[0-9a-f]{24}/g, (j) => (jids.has(j) ? `JID#${jids.get(j)}` : j));
  t = t.replace(/(created_at|enqueued_at)(&quot;|&#34;|")\s*:\s*[0-9.e+-]+/g, "$1$2:TIME");
  t = t.replace(/<time[^>]*>[^<]*<\/time>/g, "<time/>");
  t = t.replace(/name=['"]authenticity_token['"] value=['"][^'"]*['"]/g, "");
  return t;
}

const pushItem = (c: FuzzCase): PushItem => {
  const o: Record<string, RubyJsonValue> = {};
  for (const [k, v] of c.fields) o[k] = v;
  return o as unknown as PushItem;
};

/** Copies Node's queue lists (bytes unchanged) to the worker's database. */
async function handToWorker(from: Redis, to: Redis): Promise<number> {
  let n = 0;
  for (const q of FUZZ_QUEUES) {
    const jobs = await from.lrange(`queue:${q}`, 0, -1);
    if (jobs.length === 0) continue;
    // LPUSH order kept: the worker pops from the right, as from Node's list.
    await to.rpush(`queue:${q}`, ...jobs);
    await to.sadd("queues", q);
    n += jobs.length;
  }
  return n;
}

export interface NodeToRubyOptions {
  /** Also have a real worker (started by the caller on the `worker` database) perform every job. */
  worker?: boolean;
  /** Milliseconds to wait for the worker. */
  workerWaitMs?: number;
}

export async function nodeToRuby(rig: FuzzRig, cases: FuzzCase[], o: NodeToRubyOptions = {}): Promise<Mismatch[]> {
  const profile = profileForVersion(rig.target.version);
  const unit = profile.payloadTime === "millis" ? "millis" : "seconds";
  const work = rig.redis("work");
  const other = rig.redis("other");
  await Promise.all([work.flushdb(), other.flushdb()]);
  const client = new Client({ redis: other, dialect: profile.version, validate: false, warn: () => {} });
  const nodeErrors = new Map<number, string>();
  const t0 = Date.now() / 1000;
  try {
    for (const c of cases) {
      try {
        await client.push(pushItem(c));
      } catch (e) {
        nodeErrors.set(c.index, `${(e as Error).name}: ${(e as Error).message.slice(0, 200)}`);
      }
    }
  } finally {
    await client.close();
  }
  const nodeWindow = { t0, t1: Date.now() / 1000 };
  const count = cases.length;
  const [pushed, rubyViews, nodeViews, rubyPages, nodePages] = await oracle<
    [
      Array<string | { error: string }>,
      Record<string, RubyView[]>,
      Record<string, RubyView[]>,
      Record<string, { status: number; body: string }>,
      Record<string, { status: number; body: string }>,
    ]
  >(rig, [
    { op: "push", cases: cases.map(caseText) },
    { op: "views", queues: FUZZ_QUEUES },
    { op: "views", url: rig.rubyUrl("other"), queues: FUZZ_QUEUES },
    { op: "webui", queues: FUZZ_QUEUES, count },
    { op: "webui", url: rig.rubyUrl("other"), queues: FUZZ_QUEUES, count },
  ]);
  const rubyWindow = { t0: nodeWindow.t1, t1: Date.now() / 1000 };
  const index = (views: Record<string, RubyView[]>) => {
    const m = new Map<string, RubyView>();
    for (const list of Object.values(views))
      for (const v of list) m.set(v.jid ?? JobRecord.parse(v.value).getString("jid")!, v);
    return m;
  };
  const rubyByJid = index(rubyViews);
  const nodeByJid = index(nodeViews);
  const jids = new Map(cases.map((c) => [field(c, "jid") as string, c.index]));

  let performed = new Map<string, Performed>();
  if (o.worker) {
    const w = rig.redis("worker");
    await w.del("fuzz:performed");
    const n = await handToWorker(other, w);
    const deadline = Date.now() + (o.workerWaitMs ?? 120_000);
    while ((await w.llen("fuzz:performed")) < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    performed = new Map(
      (await w.lrange("fuzz:performed", 0, -1)).map((s) => JSON.parse(s) as Performed).map((p) => [p.jid, p]),
    );
    await w.del("fuzz:performed");
  }

  const mismatches: Mismatch[] = [];
  cases.forEach((c, i) => {
    const jid = field(c, "jid") as string;
    const problems: string[] = [];
    const rubyPush = pushed[i]!;
    const nodeError = nodeErrors.get(c.index);
    const rubyError = typeof rubyPush === "object" ? rubyPush.error : undefined;
    if (Boolean(rubyError) !== Boolean(nodeError))
      problems.push(`push: ruby ${rubyError ?? "pushed"}, node ${nodeError ?? "pushed"}`);
    const r = rubyByJid.get(jid);
    const n = nodeByJid.get(jid);
    if (!rubyError && !nodeError) {
      if (!r || !n) problems.push(`Ruby's API finds ${r ? "" : "not "}Ruby's job and ${n ? "" : "not "}Node's`);
      else {
        for (const p of compareRecords({
          input: caseText(c),
          ruby: r.value,
          rubyWindow,
          node: n.value,
          nodeWindow,
          unit,
        }))
          problems.push(`bytes: ${p}`);
        if (n.error) problems.push(`Ruby's API raised on Node's job: ${n.error}`);
        for (const k of ["args", "display_class", "display_args"] as const)
          if (JSON.stringify(r[k]) !== JSON.stringify(n[k]))
            problems.push(`Ruby's API reads ${k} ${show(n[k])} from Node's job, ${show(r[k])} from Ruby's`);
        if (JSON.stringify(n.args) !== JSON.stringify(canon(field(c, "args"))))
          problems.push(`Ruby's API reads args ${show(n.args)}, not the generated ones`);
      }
      if (o.worker) {
        const p = performed.get(jid);
        if (!p) problems.push("the worker did not perform Node's job");
        else {
          if (p.error) problems.push(`the worker raised on Node's job: ${p.error}`);
          if (JSON.stringify(p.args) !== JSON.stringify(canon(field(c, "args"))))
            problems.push(`the worker read args ${show(p.args)}, not the generated ones`);
        }
      }
    }
    if (problems.length) mismatches.push({ case: c, direction: "node-to-ruby", problems });
  });

  // The Web UI's page of each queue: the same table for Node's jobs as for Ruby's.
  for (const q of FUZZ_QUEUES) {
    const rp = rubyPages[q]!;
    const np = nodePages[q]!;
    const problems: string[] = [];
    // (Ruby's own Web UI answers 404 for some queue names, e.g. non-ASCII ones: the same for both is agreement.)
    if (np.status !== rp.status)
      problems.push(`the Web UI answers ${np.status} for Node's queue ${q}, ${rp.status} for Ruby's`);
    const rt = rp.status === 200 ? jobTable(rp.body, jids) : "";
    const nt = np.status === 200 ? jobTable(np.body, jids) : "";
    if (rt !== nt) {
      let d = 0;
      while (d < rt.length && rt[d] === nt[d]) d++;
      problems.push(
        `the Web UI's page of queue ${q} differs at ${d}:\n  ruby ${rt.slice(Math.max(0, d - 200), d + 200)}\n  node ${nt.slice(Math.max(0, d - 200), d + 200)}`,
      );
      // Charge it to the case whose row differs.
      const m = /JID#(\d+)/g;
      let owner: number | undefined;
      for (let x = m.exec(nt); x && x.index <= d; x = m.exec(nt)) owner = Number(x[1]);
      const c = cases.find((k) => k.index === owner) ?? cases[0]!;
      mismatches.push({ case: c, direction: "node-to-ruby", problems });
    } else if (problems.length) mismatches.push({ case: cases[0]!, direction: "node-to-ruby", problems });
  }
  return mismatches;
}
