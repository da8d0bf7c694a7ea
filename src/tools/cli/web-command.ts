// `sidekiq-bridge web`: the dashboard on http://127.0.0.1:9292/.
import { openApi } from "./connect.js";
import { UsageError } from "./errors.js";
import { intFlag, parseFlags } from "./flags.js";
import { maskUrl, redisUrl } from "./redis-url.js";
import { runCommand } from "./run-command.js";
import type { WebTab } from "../web/route.js";
import { startWebServer } from "../web/server.js";

export const summary = "serve the web dashboard (Dashboard, Busy, Queues, Retries, Scheduled, Dead, Metrics)";

export const help = `Usage: sidekiq-bridge web [options]

Serves Sidekiq's dashboard from Node for the whole fleet (Ruby 6/7/8 and
Node processes): Dashboard, Busy, Queues, Retries, Scheduled, Dead, Metrics.
Binds 127.0.0.1 unless --host says otherwise: put it behind your own
authentication before exposing it.

Options:
  -p, --port N                port (default 9292; 0 picks a free one)
      --host HOST             address to bind (default 127.0.0.1)
      --base-path PATH        serve under PATH, e.g. /sidekiq
      --read-only             show everything, change nothing
      --poll N                seconds between live updates (default 5)
      --redis URL             Redis URL (default: $REDIS_URL or redis://127.0.0.1:6379/0)
  -h, --help                  this help
      --version               the version of sidekiq-bridge`;

/** `tabs`: the add-ons' dashboard tabs, given by the command map (src/assembly/main.ts). */
export async function run(argv: string[], tabs: readonly WebTab[]): Promise<number> {
  return runCommand("web", async ({ setUrl }) => {
    const { values, positionals } = parseFlags({
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: "string", short: "p" },
        host: { type: "string" },
        "base-path": { type: "string" },
        "read-only": { type: "boolean" },
        poll: { type: "string" },
        redis: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
    if (values.help) {
      console.log(help);
      return 0;
    }
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const port = intFlag("port", values.port, 9292);
    if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
    const pollSeconds = intFlag("poll", values.poll, 5, 1);
    const url = redisUrl(values.redis);
    setUrl(url);
    const api = await openApi(url);
    const web = await startWebServer(
      {
        api,
        port,
        host: values.host,
        basePath: values["base-path"],
        readOnly: values["read-only"] === true,
        pollSeconds,
      },
      tabs,
    );
    process.stdout.write(
      `sidekiq-bridge web: ${web.url} (Redis ${maskUrl(url)}${values["read-only"] ? ", read-only" : ""}); Ctrl-C stops\n`,
    );
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
    await web.close();
    await api.close();
    api.redis.disconnect();
    return 0;
  });
}
