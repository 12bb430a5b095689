// What `npm run bench:allocation` reads from V8's sampling heap profiler, and issue 40's line 6 on it. The profiler
// takes a sample about every `samplingInterval` bytes allocated (Poisson-spaced) and scales each up to what it
// stands for, so what it reports estimates every byte allocated while it ran; with
// includeObjectsCollectedBy{Major,Minor}GC, objects a collection freed keep their samples. Two views of one profile:
// the call tree's self sizes (V8 scales the samples of each size together) and the samples' sizes (scaled one by
// one, each count rounded to a whole number: small objects come out high, 56-byte ones +3% at 512 bytes). The tree is
// the figure; the samples' sum is shown beside it. allocation-profile.test.ts checks both on a known allocation.

/** The inspector's HeapProfiler.SamplingHeapProfile, the parts used here. */
export interface SamplingHeapProfile {
  readonly head: SamplingHeapNode;
  readonly samples: readonly { readonly size: number; readonly nodeId: number; readonly ordinal: number }[];
}

export interface SamplingHeapNode {
  readonly selfSize: number;
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string };
  readonly children: readonly SamplingHeapNode[];
}

/** Issue 40, line 6: the gateway's allocation per request ≤ the got proxy's + 16 KB (16,000 bytes). */
export const ALLOCATION_MARGIN_BYTES = 16_000;

/** Bytes allocated while the profiler ran, from the samples: each sample's scaled size, summed. */
export function sampledBytes(profile: SamplingHeapProfile): number {
  return profile.samples.reduce((sum, sample) => sum + sample.size, 0);
}

/** Bytes allocated while the profiler ran (the estimate used): every call-tree node's self size, summed. */
export function allocatedBytes(node: SamplingHeapNode): number {
  return node.children.reduce((sum, child) => sum + allocatedBytes(child), node.selfSize);
}

const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} KB`;

/** Line 6's verdict for one kind of request, from bytes per request: `met (… to spare)` or `**not met**: … over`. */
export function allocationVerdict(gateway: number, gotProxy: number): string {
  const limit = gotProxy + ALLOCATION_MARGIN_BYTES;
  const over = gateway - gotProxy;
  return gateway <= limit
    ? `met (got proxy ${over >= 0 ? '+' : '−'}${kb(Math.abs(over))}, ${kb(limit - gateway)} to spare)`
    : `**not met**: got proxy +${kb(over)}, ${kb(gateway - limit)} per request over`;
}
