// `sidekiq-bridge quiet | stop IDENTITY`: Sidekiq::Process#quiet! / #stop!,
// for Ruby and Node processes alike (the process acts on its next heartbeat).
import { EmbeddedProcessError, ProcessNotFoundError, type RemoteSignalName } from "../../core/api/process-hash.js";
import { CommandError, UsageError } from "./errors.js";
import { COMMON_HELP, COMMON_OPTIONS, parseFlags } from "./flags.js";
import { printJson } from "./output.js";
import { runCommand } from "./run-command.js";
import { withApi } from "./connect.js";

interface SignalCommand {
  summary: string;
  help: string;
  run(argv: string[]): Promise<number>;
}

function makeCommand(
  command: "quiet" | "stop",
  signal: RemoteSignalName,
  what: string,
  rubyMethod: string,
): SignalCommand {
  const help = `Usage: sidekiq-bridge ${command} IDENTITY... [options]

${what} (Sidekiq::Process#${rubyMethod}): pushes ${signal} to <IDENTITY>-signals
(MULTI LPUSH + EXPIRE 60), which the process picks up on its next heartbeat
(within 10 s; 5 s on Sidekiq 6). IDENTITY is as "sidekiq-bridge processes"
lists it. Embedded processes are refused, as Ruby does.

Options:
${COMMON_HELP}`;

  async function run(argv: string[]): Promise<number> {
    return runCommand(command, async ({ setUrl }) => {
      const { values, positionals } = parseFlags({
        args: argv,
        allowPositionals: true,
        options: { ...COMMON_OPTIONS },
      });
      if (values.help) {
        console.log(help);
        return 0;
      }
      if (positionals.length === 0)
        throw new UsageError(`${command} needs the IDENTITY of a process (see: sidekiq-bridge processes)`);
      return withApi(values.redis, setUrl, {}, async (api) => {
        const signalled: Array<{ identity: string; runtime: string }> = [];
        const errors: Array<{ identity: string; error: string }> = [];
        for (const identity of positionals) {
          try {
            const p = await api.processes.signal(identity, signal);
            signalled.push({ identity, runtime: p.side });
          } catch (e) {
            if (!(e instanceof ProcessNotFoundError || e instanceof EmbeddedProcessError)) throw e;
            errors.push({ identity, error: e.message });
          }
        }
        if (values.json) printJson({ signal, signalled, errors });
        else {
          for (const s of signalled) console.log(`Sent ${signal} to ${s.identity} (${s.runtime})`);
        }
        if (errors.length > 0) {
          if (values.json) return 1;
          throw new CommandError(errors.map((e) => e.error).join("\n"));
        }
        return 0;
      });
    });
  }

  return { summary: `${what.toLowerCase()} (Process#${rubyMethod})`, help, run };
}

export const quiet = makeCommand("quiet", "TSTP", "Tell a process to stop fetching new jobs", "quiet!");
export const stop = makeCommand("stop", "TERM", "Tell a process to shut down", "stop!");
