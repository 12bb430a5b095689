// Loaded into every test file by tap's `node-arg` (package.json). tap's processinfo hook, which tap puts into every
// process a test starts, records each module a process loads for coverage and `tap --changed`, both unused here;
// in a gateway or CLI child that costs ~0.4 s of CPU per start. Children inherit this exclusion of every file.
process.env._TAPJS_PROCESSINFO_EXCLUDE_ = '/./';
