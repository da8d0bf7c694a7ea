// `sidekiq-bridge web`: the dashboard on http://127.0.0.1:9292/.
import { openApi } from "./connect.js";
import { command, type CommandModule, integer } from "./command.js";
import type { WebTab } from "../web/extension.js";
import { maskUrl, redisUrl } from "./redis-url.js";
import { startWebServer } from "../web/server.js";

/** `sidekiq-bridge web`, with the add-ons' dashboard tabs (given by the command map, src/assembly/main.ts). */
export function webCommand(tabs: readonly WebTab[]): CommandModule {
  return command({
    name: "web",
    summary: "serve the web dashboard (Dashboard, Busy, Queues, Retries, Scheduled, Dead, Metrics)",
    usage: "[options]",
    about: `Serves Sidekiq's dashboard from Node for the whole fleet (Ruby 6/7/8 and
Node processes): Dashboard, Busy, Queues, Retries, Scheduled, Dead, Metrics.
Binds 127.0.0.1 unless --host says otherwise: put it behind your own
authentication before exposing it.`,
    flags: {
      port: {
        short: "p",
        value: "N",
        help: "port (default 9292; 0 picks a free one)",
        parse: integer(0, 65535),
        default: 9292,
      },
      host: { value: "HOST", help: "address to bind (default 127.0.0.1)" },
      "base-path": { value: "PATH", help: "serve under PATH, e.g. /sidekiq" },
      "read-only": { help: "show everything, change nothing" },
      poll: { value: "N", help: "seconds between live updates (default 5)", parse: integer(1), default: 5 },
    },
    async run({ values, setUrl }) {
      const { port, poll: pollSeconds } = values;
      const url = redisUrl(values.redis);
      setUrl(url);
      const api = await openApi(url);
      const web = await startWebServer(
        {
          api,
          port,
          host: values.host,
          basePath: values["base-path"],
          readOnly: values["read-only"],
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
    },
  });
}
