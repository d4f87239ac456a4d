/** The shell's host channels are declared in the contract (one place for every channel the preload may use). */
export { HOST_CHANNELS, HOST_MENU_CHANNEL, HOST_OPEN_EXTERNAL_CHANNEL } from '../src/service/contract.js';
