// The unique-lock chaos scenarios' jobs, with sidekiq-unique-jobs (gem 8) on.
// Each job records its start and its end in a ledger Redis of its own (not
// the one being broken), so a run is never lost with the faults under test:
// a start `S` with its key, copy, jid, pid and a token per execution, an end
// `E` with the token. args: [key, copy, ms]; the lock covers the key only.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";

const ledger = new Redis(process.env.CHAOS_LEDGER_URL, { maxRetriesPerRequest: null });

// The worker option that turns the add-on on, as a handlers module may export it.
export const uniqueJobs = { gem: 8 };

export default (worker) => {
  for (const cls of ["UJUntilExecuted", "UJWhileExecuting", "UJUntilAndWhile"]) {
    worker.register(cls, async ([key, copy, ms], ctx) => {
      const token = randomBytes(4).toString("hex");
      const start = { t: "S", key, copy, jid: ctx.jid, pid: process.pid, token, at: Date.now() };
      await ledger.rpush("uj:ledger", JSON.stringify(start));
      await new Promise((r) => setTimeout(r, ms));
      await ledger.rpush("uj:ledger", JSON.stringify({ t: "E", token, at: Date.now() }));
    });
  }
};
