// The parts of `npm run bench:profile`: each sample of `perf script -F ip,sym` (a call stack, innermost frame
// first, samples separated by a blank line) counted in one part, named by the first JavaScript frame on the stack.

export interface Parts {
  readonly samples: Map<string, number>;
  readonly total: number;
}

/** Packages by what they do in the gateway (any other package is named as itself). */
const PACKAGES: Readonly<Record<string, string>> = {
  got: 'got',
  'lowercase-keys': 'got',
  '@sindresorhus/is': 'got',
  'cacheable-lookup': 'got',
  'cacheable-request': 'got',
  'responselike': 'got',
  pino: 'pino (log lines)',
  'sonic-boom': 'pino (log lines)',
  'prom-client': 'prom-client (metrics)',
  express: 'Express',
  router: 'Express',
  'path-to-regexp': 'Express',
  finalhandler: 'Express',
  'on-finished': 'Express',
  'parseurl': 'Express',
};

/** A perf-basic-prof frame: `JS:<tier mark><name> <url>:<line>:<column>`. */
const JS_FRAME = /^JS:\S?(?:.*?) (\S+):\d+:\d+$/;
const PACKAGE = /node_modules\/(?!\.cache\/)(@[^/]+\/[^/]+|[^/]+)\//;
/** The gateway's dist/ (the bench runs a copy of it inside node_modules/.cache). */
const GATEWAY_MODULE = /\/dist\/([^/]+?)(?:\.js)?(?:\/|$)/;

export function partOfUrl(url: string): string {
  const pkg = PACKAGE.exec(url);
  if (pkg) return PACKAGES[pkg[1]!] ?? `package ${pkg[1]}`;
  if (url.startsWith('node:') || !url.includes('/')) return 'Node core (JavaScript)';
  const module = GATEWAY_MODULE.exec(url);
  if (module) return `gateway: ${module[1]}`;
  return 'the proxy (its own code)';
}

/** V8's garbage collector, by its native functions' names (perf's and callgrind's alike). */
export const GC_FUNCTION = /Scavenger|Marking|Sweeper|MarkCompact|Heap::|GCTracer|MinorMS|Evacuat|RememberedSet|SlotSet/;
/**
 * V8's compilers and JavaScript parser, by their native functions' names; only in V8's namespace, so that Node's
 * http_parser (llhttp's host) and its module compilation are not taken for the JIT.
 */
export const COMPILER_FUNCTION = /v8::internal::(?:compiler::|maglev::|baseline::|interpreter::Bytecode(?:Generator|ArrayBuilder)|Compiler::|Parser::|PreParser|.*Compil)|Turbofan|Sparkplug/;

function partOfStack(frames: readonly string[]): string {
  const inKernel = frames.some((frame) => frame === 'do_syscall_64' || frame === 'entry_SYSCALL_64_after_hwframe');
  for (const frame of frames) {
    const js = JS_FRAME.exec(frame);
    if (js) return inKernel ? `${partOfUrl(js[1]!)}, system calls` : partOfUrl(js[1]!);
  }
  if (inKernel) return 'system calls (no JavaScript on the stack)';
  if (frames.some((frame) => GC_FUNCTION.test(frame))) return 'garbage collection';
  if (frames.some((frame) => COMPILER_FUNCTION.test(frame))) return 'JIT compiler';
  return 'other native work';
}

export function profileParts(script: string): Parts {
  const samples = new Map<string, number>();
  let total = 0;
  let frames: string[] = [];
  const flush = () => {
    if (frames.length === 0) return;
    const part = partOfStack(frames);
    samples.set(part, (samples.get(part) ?? 0) + 1);
    total++;
    frames = [];
  };
  for (const line of script.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '') {
      flush();
      continue;
    }
    // `<ip> <symbol>`: the symbol may hold spaces.
    const space = trimmed.indexOf(' ');
    frames.push(space === -1 ? trimmed : trimmed.slice(space + 1));
  }
  flush();
  return { samples, total };
}
