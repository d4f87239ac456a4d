import type { Command } from 'commander';

// Skeleton: the owning work item replaces this with the real verb.
export function register(program: Command): void {
  program
    .command('project')
    .description('(not built yet)')
    .action(() => {
      throw new Error('spillway project is not built yet');
    });
}
