import type { Command } from 'commander';

// Skeleton: the owning work item replaces this with the real verb.
export function register(program: Command): void {
  program
    .command('summarize')
    .description('(not built yet)')
    .action(() => {
      throw new Error('spillway summarize is not built yet');
    });
}
