// The sign-in page: checks the token against the admin API and keeps it in
// this tab's sessionStorage.
import {$, getSession, setSession, message} from './console.js';

if (getSession()) location.replace('rulebook.html');

const params = new URLSearchParams(location.search);
if (params.has('expired')) message('warn', 'Your token was not accepted any more. Sign in again.');
if (params.has('signedout')) message('info', 'You are signed out. The token was removed from this tab.');

const form = $('signin');
form.addEventListener('submit', async ev => {
  ev.preventDefault();
  const err = $('signin-error');
  err.textContent = '';
  const token = form.elements.token.value.trim();
  if (!token) {
    err.textContent = 'Paste your publisher admin token.';
    return;
  }
  $('signin-button').disabled = true;
  try {
    const res = await fetch('/admin/v1/whoami', {
      headers: {Authorization: 'Bearer ' + token, Accept: 'application/json'},
      credentials: 'omit', cache: 'no-store', redirect: 'error', referrerPolicy: 'no-referrer',
    });
    if (res.status === 401) {
      err.textContent = 'That token was not accepted. Check that you copied all of it.';
      return;
    }
    if (!res.ok) {
      err.textContent = 'The storefront answered ' + res.status + '. Try again shortly.';
      return;
    }
    const who = await res.json();
    setSession({token, publisher: who.publisher, name: who.token_name || '', tokenId: who.token_id || ''});
    form.reset();
    location.replace('rulebook.html');
  } catch (e) {
    err.textContent = 'The storefront could not be reached: ' + e.message;
  } finally {
    $('signin-button').disabled = false;
  }
});
