// Sidekiq Pro's batches, as far as Node can know them: a job of a batch
// carries its batch id in `bid`. The batch's own records and callbacks are in
// Sidekiq Pro's closed formats, which the bridge never guesses, so Node cannot
// run such a job without breaking its batch (the batch would never see it
// finish, and its callbacks would never run). This entry only marks those
// jobs: a worker hands them back to Ruby, and `migrate audit` blocks their queues.
import type { Addon } from "../addon.js";

export const proBatchesAddon: Addon<never, "proBatches"> = {
  name: "proBatches",
  gem: "Sidekiq Pro batches",
  onByDefault: false,
  markers: [
    {
      field: "bid",
      what: "a Sidekiq Pro batch id (bid)",
      breaks:
        "Node cannot update a Sidekiq Pro batch (its formats are closed), so the batch would never see the job finish and its callbacks would never run",
    },
  ],
};
