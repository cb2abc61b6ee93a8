// Sign-in across the tabs of one browser session, without putting the token anywhere it
// outlives them: each tab keeps its token in its own sessionStorage (core/state.js), and a
// new tab asks the open tabs of the same origin for it over a BroadcastChannel. A tab that
// signs out tells the others, which sign out too; a tab that signs in tells the signed-out
// ones. When the last tab closes, the token is gone. Never in the address, never in
// localStorage.
const CHANNEL = "recommender.session";
const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(CHANNEL) : null;

let tokenOf = () => null;

/**
 * Answer other tabs and follow their sign-ins and sign-outs.
 * @param {{token: () => (string|null), signedIn: (token:string) => void, signedOut: () => void}} handlers
 *        `token`: this tab's token (null: signed out); `signedIn`: another tab signed in (called
 *        only while this one is signed out); `signedOut`: another tab signed out
 */
export function followOtherTabs({ token, signedIn, signedOut }) {
  tokenOf = token;
  channel?.addEventListener("message", ({ data }) => {
    if (data?.type === "ask" && tokenOf()) channel.postMessage({ type: "token", id: data.id, token: tokenOf() });
    else if (data?.type === "signed-in" && !tokenOf() && data.token) signedIn(data.token);
    else if (data?.type === "signed-out" && tokenOf()) signedOut();
  });
}

/** The token of another open tab, or null when none answers within `waitMs`. */
export function askOtherTabs(waitMs = 400) {
  if (!channel) return Promise.resolve(null);
  const id = `${Date.now()}-${Math.random()}`;
  const asking = new BroadcastChannel(CHANNEL); // a second port: it hears the first one's answers
  return new Promise((resolve) => {
    const done = (token) => { clearTimeout(timer); asking.close(); resolve(token); };
    const timer = setTimeout(() => done(null), waitMs);
    asking.addEventListener("message", ({ data }) => {
      if (data?.type === "token" && data.id === id && data.token) done(data.token);
    });
    asking.postMessage({ type: "ask", id });
  });
}

/** Tell the other tabs this one signed in (signed-out tabs follow). */
export function announceSignIn(token) {
  channel?.postMessage({ type: "signed-in", token });
}

/** Tell the other tabs this one signed out (they sign out too). */
export function announceSignOut() {
  channel?.postMessage({ type: "signed-out" });
}
