import t from 'tap';
import { workerExecArgv } from '../../src/worker-node-options.js';

t.test("a worker gets the primary's node options and a 16 MiB young generation", async (t) => {
  t.same(workerExecArgv([], undefined), ['--max-semi-space-size=16']);
  t.same(workerExecArgv(['--enable-source-maps', '--max-old-space-size=512'], '--no-warnings'), ['--enable-source-maps', '--max-old-space-size=512', '--max-semi-space-size=16']);
});

t.test('an operator who sized the young generation decides, in node arguments or NODE_OPTIONS, however spelled', async (t) => {
  for (const option of ['--max-semi-space-size=32', '--max_semi_space_size=4', '--min-semi-space-size=8', '--semi-space-growth-factor=4']) {
    t.same(workerExecArgv([option], undefined), [option], `argument ${option}`);
    t.same(workerExecArgv(['--enable-source-maps'], ` --inspect=0  ${option} `), ['--enable-source-maps'], `NODE_OPTIONS ${option}`);
  }
});
