// The one runtime object (Sidekiq::Config): a processor holds it by
// reference, so what is plugged in through its seams after the processor was
// given it (an add-on's install, a handlers module) is what the next job
// meets: the handler, the middleware in its order, a gate, the markers, the
// job events and the error handlers.
import { expect, it } from "vitest";
import { offlineProcessorDeps, offlineWork } from "../../harness/processor-deps.js";
import type { Logger } from "../../src/core/logging/logger.js";
import { named } from "../../src/core/middleware/chain.js";
import { processJob } from "../../src/core/server/processor.js";

const logger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

function unit(className: string, extra = "") {
  const job = `{"retry":false,"queue":"q","class":"${className}","args":[],"jid":"0123456789abcdef0123456${className.length}"${extra}}`;
  return { queue: "queue:q", queueName: "q", job, raw: Buffer.from(job), field: undefined } as never;
}

it("a processor meets what was plugged into the runtime after it was given it", async () => {
  const deps = offlineProcessorDeps({ handlers: {}, logger });
  const rt = deps.config;
  const seen: string[] = [];
  rt.handlers.set("LateJob", { handler: () => void seen.push("handler"), options: {} });
  rt.useServer(named("Second", async (_c, next) => (seen.push("second"), next())));
  rt.serverMiddleware.insertBefore(
    "Second",
    named("First", async (_c, next) => (seen.push("first"), next())),
  );
  rt.gate({ name: "gate", admit: () => (seen.push("gate"), "run") });
  rt.on("job:success", (e) => void seen.push(`success ${e.className}`));
  expect(await processJob(offlineWork(unit("LateJob")), deps)).toBe("ack");
  expect(seen).toEqual(["gate", "first", "second", "handler", "success LateJob"]);

  // Markers are set at start, after the launcher was built: the processor reads them from the runtime.
  rt.markers = [{ field: "lock_digest", addon: "sidekiq-unique-jobs", handBack: true, message: "handed back" }];
  expect(await processJob(offlineWork(unit("LateJob", ',"lock_digest":"d"'), "t2"), deps)).toBe("hand-back");
});

it("an error handler added through the runtime is what handleException calls; a throwing listener is logged and skipped", () => {
  const errors: string[] = [];
  const deps = offlineProcessorDeps({
    handlers: {},
    logger: { ...logger, error: (m) => void errors.push(m) },
  });
  const rt = deps.config;
  const handled: unknown[] = [];
  rt.onError((e, c) => void handled.push([(e as Error).message, c.context]));
  rt.on("error", () => {
    throw new Error("listener");
  });
  rt.handleException(new Error("boom"), { context: "a poller" });
  expect(handled).toEqual([["boom", "a poller"]]);
  expect(errors).toEqual(['a "error" listener threw; ignored']);
});
