// The consumer span's remote context: read when the job carries a key the
// global propagator declares, skipped (same span) when it carries none, and
// always read for a propagator whose fields cannot be listed; a span the
// sampler drops still runs its job, without reading the payload's times.
import * as api from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import type { Redis } from "ioredis";
import { afterEach, describe, expect, it, vi } from "vitest";
import { tracingServerMiddleware } from "../../src/tools/tracing/opentelemetry.js";
import { JobRecord } from "../../src/core/wire/job-record.js";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";
const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

async function runJob(payload: string, propagationStyle: "link" | "child" = "link") {
  exporter.reset();
  const mw = tracingServerMiddleware({ api, tracerProvider, propagationStyle });
  const job = JobRecord.parse(payload);
  await mw({ jid: "j", className: "C", queue: "q", job, redis: undefined as unknown as Redis }, async () => {});
  const [span] = exporter.getFinishedSpans();
  return span!;
}

const traced = `{"class":"C","queue":"q","args":[],"jid":"abc","created_at":1763880000000,"traceparent":"00-${TRACE}-${PARENT}-01","enqueued_at":1763880000001}`;
const plain = `{"class":"C","queue":"q","args":[],"jid":"abc","created_at":1763880000000,"enqueued_at":1763880000001.5}`;

describe("tracing: the job's remote context", () => {
  afterEach(() => api.propagation.disable());

  it("links (or parents) the span to the job's traceparent; a job without one gets a root span, no link", async () => {
    api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const linked = await runJob(traced);
    expect(linked.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([[TRACE, PARENT]]);
    expect(linked.spanContext().traceId).not.toBe(TRACE);
    const child = await runJob(traced, "child");
    expect(child.spanContext().traceId).toBe(TRACE);
    expect(child.parentSpanContext?.spanId).toBe(PARENT);
    const root = await runJob(plain);
    expect(root.links).toEqual([]);
    expect(root.parentSpanContext).toBeUndefined();
    // The payload times as events, as the SDK converts a Date (whole milliseconds).
    expect(root.events.map((e) => [e.name, e.time])).toEqual([
      ["created_at", [1763880000, 0]],
      ["enqueued_at", [1763880000, 1_000_000]],
    ]);
  });

  it("asks a propagator whose fields() throws, instead of skipping it", async () => {
    const w3c = new W3CTraceContextPropagator();
    api.propagation.setGlobalPropagator({
      inject: (c, carrier, setter) => w3c.inject(c, carrier, setter),
      extract: (c, carrier, getter) => w3c.extract(c, carrier, getter),
      fields: () => {
        throw new Error("no fields here");
      },
    });
    const linked = await runJob(traced);
    expect(linked.links.map((l) => l.context.traceId)).toEqual([TRACE]);
  });

  it("runs a job whose span the sampler drops, without reading the times that only a recorded span keeps", async () => {
    api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    exporter.reset();
    const sampledOut = new BasicTracerProvider({
      sampler: new AlwaysOffSampler(),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const mw = tracingServerMiddleware({ api, tracerProvider: sampledOut });
    const job = JobRecord.parse(traced);
    const get = vi.spyOn(job, "get");
    let ran = false;
    await mw({ jid: "j", className: "C", queue: "q", job, redis: undefined as unknown as Redis }, async () => {
      ran = true;
    });
    expect(ran).toBe(true);
    expect(exporter.getFinishedSpans()).toEqual([]);
    const read = get.mock.calls.map(([k]) => k);
    expect(read).toContain("traceparent");
    expect(read).not.toContain("created_at");
    expect(read).not.toContain("enqueued_at");
  });
});
