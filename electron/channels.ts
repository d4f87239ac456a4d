/** IPC channels of the desktop shell's own features (next to the contract's `spillway:<method>` ones). */
export const HOST_MENU_CHANNEL = 'spillway-host:menu';
export const HOST_OPEN_EXTERNAL_CHANNEL = 'spillway-host:open-external';
