// bench:latency sends one request at a time to each target in a round. Which target ran just before matters (a
// process still warm from its own last request answers faster), so every target must follow every other alike.
import t from 'tap';
import { roundOrder } from '../../../scripts/bench/latency-client.js';

t.test('each round sends to every target exactly once', async (t) => {
  for (let round = 0; round < 200; round++) {
    t.same([...roundOrder(5, round)].sort(), [0, 1, 2, 3, 4], `round ${round}`);
  }
});

t.test('every target follows every other target, about equally often', async (t) => {
  const targets = 5;
  const rounds = 5000;
  const before = Array.from({ length: targets }, () => new Array<number>(targets).fill(0));
  let previous: number | undefined;
  for (let round = 0; round < rounds; round++) {
    for (const i of roundOrder(targets, round)) {
      if (previous !== undefined) before[i]![previous]! += 1;
      previous = i;
    }
  }
  for (let i = 0; i < targets; i++) {
    const others = before[i]!.filter((_, j) => j !== i);
    const mean = others.reduce((a, b) => a + b, 0) / others.length;
    for (const [j, n] of before[i]!.entries()) {
      if (j === i) continue;
      t.ok(Math.abs(n - mean) < mean * 0.15, `target ${i} came after target ${j} ${n} times (mean ${mean.toFixed(0)})`);
    }
  }
});

t.test('a run can be repeated: the same round gives the same order', async (t) => {
  t.same(roundOrder(5, 42), roundOrder(5, 42));
  t.not(roundOrder(5, 1).join(), roundOrder(5, 2).join(), 'rounds differ');
});
