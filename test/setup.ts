import fc from 'fast-check';

// Property tests fuzz with a fixed seed in CI so a landing run is reproducible; set FC_SEED=random
// (or any number) locally to explore new inputs. A failure prints its seed and counterexample either way.
const seedEnv = process.env.FC_SEED;
if (seedEnv !== 'random') {
  fc.configureGlobal({ seed: seedEnv ? Number(seedEnv) : 20_261_130 });
}
