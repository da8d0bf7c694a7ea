// What the OpenTelemetry SDK alone costs for one consumer span, with no
// sidekiq-bridge code at all: the W3C extract of a job's traceparent, a
// CONSUMER span with the messaging attributes, a link (Ruby's default
// propagation style) and the two events Ruby adds, the job run inside `context.with` (an async function
// awaiting once), `end()`, the batch processor with an exporter that drops
// spans, and the AsyncLocalStorage context manager that `@opentelemetry/sdk-node`
// installs. Ten at a time, then a turn of the event loop, as in a drain.
// CPU µs a span by process.cpuUsage, minus the same loop without the span,
// variants interleaved, medians.
//
// Any tracing that records a sampled span per job pays at least this. Set
// against the cost of a job with everything off (bench/observability.ts), it
// bounds the throughput a traced drain can keep.
//
//   npx tsx bench/otel-sdk-floor.ts
//   scripts/node24 node_modules/tsx/dist/cli.mjs bench/otel-sdk-floor.ts
import * as api from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { median } from "./measure/summary.js";

const SPANS = Number(process.env.BENCH_FLOOR_SPANS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_FLOOR_ROUNDS ?? 9);
const cpu = (c: NodeJS.CpuUsage) => c.user + c.system;
const hex = (n: number, w: number) => n.toString(16).padStart(w, "0");

const provider = new BasicTracerProvider({
  spanProcessors: [new BatchSpanProcessor({ export: (_s, done) => done({ code: 0 }), shutdown: async () => {} })],
});
const tracer = provider.getTracer("sidekiq-bridge-floor");
const propagator = new W3CTraceContextPropagator();
const getter: api.TextMapGetter<Record<string, string>> = {
  keys: (c) => Object.keys(c),
  get: (c, k) => c[k],
};
const carriers = Array.from({ length: 1000 }, (_, i) => ({
  traceparent: `00-${hex(i + 1, 32)}-${hex(i + 1, 16)}-01`,
}));

const created: api.HrTime = [1763880000, 1_000_000];
const body = async () => {
  await Promise.resolve();
};

/** One job's span, as a tracing middleware must make it. */
async function traced(i: number): Promise<void> {
  const extracted = propagator.extract(api.ROOT_CONTEXT, carriers[i % 1000]!, getter);
  const link = api.trace.getSpanContext(extracted);
  const span = tracer.startSpan(
    "default process",
    {
      kind: api.SpanKind.CONSUMER,
      // The attributes of Ruby's Sidekiq instrumentation (and of ours).
      attributes: {
        "messaging.system": "sidekiq",
        "messaging.sidekiq.job_class": "NoopJob",
        "messaging.message_id": hex(i, 24),
        "messaging.destination": "default",
        "messaging.destination_kind": "queue",
        "messaging.operation": "process",
      },
      links: link ? [{ context: link }] : [],
      root: true,
    },
    extracted,
  );
  // Ruby's instrumentation adds these two events from the payload's times.
  span.addEvent("created_at", created);
  span.addEvent("enqueued_at", created);
  try {
    await api.context.with(api.trace.setSpan(extracted, span), body);
  } finally {
    span.end();
  }
}

const plain = (_i: number) => body();

async function loop(job: (i: number) => Promise<void>): Promise<number> {
  const c0 = process.cpuUsage();
  for (let i = 0; i < SPANS; i += 10) {
    const batch: Promise<void>[] = [];
    for (let k = 0; k < 10; k++) batch.push(job(i + k));
    await Promise.all(batch);
    await new Promise((r) => setImmediate(r));
  }
  return cpu(process.cpuUsage(c0)) / SPANS;
}

const contextManager = new AsyncLocalStorageContextManager();
contextManager.enable();
api.context.setGlobalContextManager(contextManager);

const results = { plain: [] as number[], span: [] as number[] };
await loop(traced); // warm-up
await loop(plain);
for (let r = 0; r < ROUNDS; r++) {
  results.plain.push(await loop(plain));
  results.span.push(await loop(traced));
}
await provider.shutdown();
const plainUs = median(results.plain);
const spanUs = median(results.span);
const floor = spanUs - plainUs;
console.log(`Node ${process.version}, ${SPANS.toLocaleString()} spans x ${ROUNDS} rounds, medians, CPU µs a job`);
console.log(`  loop without a span: ${plainUs.toFixed(1)}`);
console.log(`  loop with the SDK's consumer span: ${spanUs.toFixed(1)}`);
console.log(`  the SDK's own cost a span: ${floor.toFixed(1)}`);
for (const jobUs of [25, 35, 50]) {
  console.log(
    `  a job costing ${jobUs} µs with everything off keeps at most ${(jobUs / (jobUs + floor)).toFixed(2)} of its throughput traced`,
  );
}
