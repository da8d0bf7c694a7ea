// Every Redis command src/ can send, read from the code rather than from a
// run: each call of an ioredis command method (found through the type
// checker, so a Map's get or an array's sort is not taken for one), each
// `call("cmd", …)` with its name as a literal type, and each command the Lua
// scripts call (Redis checks those against the user's ACL too).
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A command (lower case, "container|sub" for a subcommand) and where src/ sends it. */
export type CommandSites = Map<string, string[]>;

/** Commands whose ACL rule names a subcommand: the first argument says which. */
const CONTAINERS = new Set(["acl", "client", "command", "config", "function", "memory", "object", "script", "xinfo"]);

/** ioredis methods that send a command under another name. */
const ALIASES: Record<string, string[]> = {
  // MULTI is queued when the transaction is built, EXEC when it runs.
  multi: ["multi", "exec"],
  scanStream: ["scan"],
  sscanStream: ["sscan"],
  hscanStream: ["hscan"],
  zscanStream: ["zscan"],
};

/**
 * The Lua calls whose command is a variable, and the commands it takes
 * (from the script's callers, whose argument types say so).
 */
export const DYNAMIC_LUA_CALLS: Record<string, readonly string[]> = {
  "src/core/redis/scripts/requeue-from-working.ts": ["rpush", "lpush"],
  "src/core/redis/scripts/commit-promoted-batch.ts": ["sadd", "lpush"],
};

export interface ScanResult {
  commands: CommandSites;
  /** Calls whose command the scan cannot name (a plain string variable): each one a finding. */
  unknown: string[];
}

function add(out: CommandSites, command: string, site: string): void {
  const list = out.get(command) ?? [];
  list.push(site);
  out.set(command, list);
}

/** The string literal values a node's type allows ("eval" | "evalsha"), or undefined when it is any string. */
function literalValues(checker: ts.TypeChecker, node: ts.Expression | undefined): string[] | undefined {
  if (!node) return undefined;
  const type = checker.getTypeAtLocation(node);
  const parts = type.isUnion() ? type.types : [type];
  const values = parts.map((p) => (p.isStringLiteral() ? p.value : undefined));
  return values.every((v) => v !== undefined) ? values.map((v) => v.toLowerCase()) : undefined;
}

function ioredisFile(decl: ts.Declaration): string | undefined {
  const file = decl.getSourceFile().fileName;
  const at = file.lastIndexOf("/node_modules/ioredis/built/");
  return at < 0 ? undefined : file.slice(at + "/node_modules/ioredis/built/".length);
}

/** The commands one ioredis method call sends, or undefined when it sends none (connect, pipeline, on...). */
function commandsOf(
  checker: ts.TypeChecker,
  call: ts.CallExpression,
  method: string,
  file: string,
): string[] | undefined {
  if (method === "call" || method === "callBuffer") {
    const name = literalValues(checker, call.arguments[0]);
    if (!name) return ["?"];
    return name.map((n) => (CONTAINERS.has(n) ? sub(checker, n, call.arguments[1]) : n));
  }
  if (ALIASES[method]) return ALIASES[method];
  // A pipeline's exec sends nothing of its own (a MULTI's EXEC is counted at multi).
  if (file !== "utils/RedisCommander.d.ts" || method === "exec") return undefined;
  const name = method.replace(/Buffer$/, "").toLowerCase();
  return [CONTAINERS.has(name) ? sub(checker, name, call.arguments[0]) : name];
}

function sub(checker: ts.TypeChecker, container: string, arg: ts.Expression | undefined): string {
  const values = literalValues(checker, arg);
  return values?.length === 1 ? `${container}|${values[0]}` : `${container}|?`;
}

const LUA_CALL = /redis\.p?call\(\s*("([^"]+)"|'([^']+)'|[^"'\s][^,)]*)/g;

/** The commands in the Lua text of one file's template literals. */
function scanLua(sf: ts.SourceFile, rel: string, out: ScanResult): void {
  let dynamic = 0;
  const visit = (n: ts.Node): void => {
    if (ts.isTemplateLiteral(n) || ts.isStringLiteral(n)) {
      const text = n.getText(sf);
      for (const m of text.matchAll(LUA_CALL)) {
        const line = sf.getLineAndCharacterOfPosition(n.getStart(sf) + (m.index ?? 0)).line + 1;
        const name = m[2] ?? m[3];
        if (name) add(out.commands, name.toLowerCase(), `${rel}:${line} (Lua)`);
        else dynamic++;
      }
      return;
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  if (dynamic === 0) return;
  const known = DYNAMIC_LUA_CALLS[rel];
  if (!known)
    out.unknown.push(`${rel}: Lua calls a command named by a variable (list what it takes in DYNAMIC_LUA_CALLS)`);
  else for (const c of known) add(out.commands, c, `${rel} (Lua, by variable)`);
}

/** The names of ioredis' command methods (RedisCommander) and of the others above that send commands. */
function ioredisMethodNames(program: ts.Program): Set<string> {
  const names = new Set(["call", "callBuffer", ...Object.keys(ALIASES)]);
  for (const sf of program.getSourceFiles()) {
    if (!sf.fileName.endsWith("/node_modules/ioredis/built/utils/RedisCommander.d.ts")) continue;
    const visit = (n: ts.Node): void => {
      if (ts.isMethodSignature(n) && ts.isIdentifier(n.name)) names.add(n.name.text);
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  if (names.size < 100)
    throw new Error("ioredis' RedisCommander.d.ts not found or changed shape: the scan cannot tell commands");
  return names;
}

/** Scans src/ (the files of tsconfig.build.json). */
export function scanRedisCommands(): ScanResult {
  const config = ts.getParsedCommandLineOfConfigFile(
    `${ROOT}tsconfig.build.json`,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  );
  if (!config) throw new Error("cannot read tsconfig.build.json");
  const program = ts.createProgram(config.fileNames, { ...config.options, noEmit: true });
  const checker = program.getTypeChecker();
  // Only calls named like an ioredis method are worth the type checker's time.
  const candidates = ioredisMethodNames(program);
  const result: ScanResult = { commands: new Map(), unknown: [] };
  for (const sf of program.getSourceFiles()) {
    if (sf.isDeclarationFile || !sf.fileName.startsWith(`${ROOT}src/`)) continue;
    const rel = sf.fileName.slice(ROOT.length);
    scanLua(sf, rel, result);
    const visit = (n: ts.Node): void => {
      if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression)) {
        const method = n.expression.name.text;
        const decl = candidates.has(method)
          ? checker.getSymbolAtLocation(n.expression.name)?.declarations?.[0]
          : undefined;
        const file = decl && ioredisFile(decl);
        const commands = file === undefined ? undefined : commandsOf(checker, n, method, file);
        const site = `${rel}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}`;
        for (const c of commands ?? []) {
          if (c.includes("?")) result.unknown.push(`${site}: ${method}(…) with a command the types do not name`);
          else add(result.commands, c, site);
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return result;
}
