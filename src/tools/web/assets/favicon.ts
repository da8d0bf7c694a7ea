// The tab icon, /assets/favicon.svg: a white "S" on Sidekiq's red.
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#b1003e"/><text x="16" y="23" font-family="Arial, sans-serif" font-size="20" font-weight="700" fill="#fff" text-anchor="middle">S</text></svg>`;
