import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Api, type ApiError, type Scope } from './api.js';
import { EditorView } from './editor-view.js';
import { InboxView } from './inbox-view.js';
import { ListView } from './list-view.js';
import { navigate } from './navigate.js';
import { ProcessView } from './process-view.js';
import { RecipeView } from './recipe-view.js';
import { parseRoute, type Route, routeHash } from './route.js';
import { RunView } from './run-view.js';
import { SessionView } from './session-view.js';
import { loadRecent, loadScope, loadToken, saveScope, saveToken } from './store.js';
import { TrashView } from './trash-view.js';
import { allowRouteChange } from './unsaved-guard.js';
import { skipLink, useViewChange } from './view-focus.js';
import { viewTitle } from './view-title.js';
import { setUserZone, setZoneChoice, zoneChoice } from './zone.js';
import { ZoneToggle } from './zone-toggle.js';

function useRoute(): Route {
  const [hash, setHash] = useState(window.location.hash);
  const shown = useRef(hash);
  useEffect(() => {
    const follow = () => {
      if (!allowRouteChange(shown.current)) return;
      shown.current = window.location.hash;
      setHash(window.location.hash);
    };
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, []);
  return useMemo(() => parseRoute(hash, loadScope()), [hash]);
}

function Login({ onToken, notice }: { onToken: (token: string) => void; notice: string }) {
  const [value, setValue] = useState('');
  return (
    <main id="main" class="login">
      <h1>Ursa schedulers</h1>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (value.trim() !== '') onToken(value.trim());
        }}
      >
        <p>
          Enter an API token of this Ursa server (<code>ursa token create</code> makes one; the first start of{' '}
          <code>ursa serve</code> prints an admin token). It is kept in this tab only, until the tab is
          closed.
        </p>
        {notice !== '' && (
          <p id="token-error" class="error" role="alert">
            {notice}
          </p>
        )}
        <label for="token">API token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          aria-invalid={notice !== ''}
          aria-describedby={notice === '' ? undefined : 'token-error'}
          value={value}
          onInput={(event) => setValue(event.currentTarget.value)}
        />
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}

function ScopePicker({ scope, inbox }: { scope: Scope; inbox: boolean }) {
  const [tenant, setTenant] = useState(scope.tenant);
  const [project, setProject] = useState(scope.project);
  useEffect(() => {
    setTenant(scope.tenant);
    setProject(scope.project);
  }, [scope.tenant, scope.project]);
  const recent = loadRecent();
  return (
    <form
      class="scope"
      aria-label="Tenant and project"
      onSubmit={(event) => {
        event.preventDefault();
        const next = { tenant: tenant.trim(), project: project.trim() };
        if (next.tenant === '' || next.project === '') return;
        saveScope(next);
        navigate(inbox ? { view: 'inbox', ...next } : { view: 'list', ...next });
      }}
    >
      <label>
        Tenant
        <input
          name="tenant"
          list="recent-tenants"
          value={tenant}
          required
          spellcheck={false}
          onInput={(event) => setTenant(event.currentTarget.value)}
        />
      </label>
      <datalist id="recent-tenants">
        {recent.tenants.map((t) => (
          <option key={t} value={t} />
        ))}
      </datalist>
      <label>
        Project
        <input
          name="project"
          list="recent-projects"
          value={project}
          required
          spellcheck={false}
          onInput={(event) => setProject(event.currentTarget.value)}
        />
      </label>
      <datalist id="recent-projects">
        {recent.projects.map((p) => (
          <option key={p} value={p} />
        ))}
      </datalist>
      <button type="submit">Open</button>
    </form>
  );
}

/** The scheduler editor of spec §10: token, tenant and project, then the views of the route. */
export function App() {
  const [token, setToken] = useState(loadToken());
  const [notice, setNotice] = useState('');
  // Every view reads the zone when it renders; this state re-renders them all on a change.
  const [zone, setZone] = useState(zoneChoice());
  const route = useRoute();
  const signOut = useCallback((error?: ApiError) => {
    saveToken('');
    setToken('');
    setNotice(error === undefined ? '' : `The server did not accept the token: ${error.message}`);
  }, []);
  const api = useMemo(() => new Api(token, (error) => signOut(error)), [token, signOut]);
  const scope: Scope = { tenant: route.tenant, project: route.project };
  // A refused token returns to the sign-in page with the focus in the token field, beside its error.
  useViewChange(
    token === '' ? 'sign-in' : routeHash(route),
    viewTitle(token === '' ? undefined : route),
    token === '' && notice !== '' ? '#token' : undefined,
  );

  useEffect(() => {
    if (token !== '' && route.view !== 'inbox') saveScope(scope);
  }, [token, scope.tenant, scope.project, route.view]);

  // The user's display zone, once per token and project; until it is known, the browser's.
  const [, setZoneKnown] = useState(0);
  useEffect(() => {
    if (token === '') return;
    let current = true;
    api.me(scope).then(
      (me) => {
        if (!current) return;
        setUserZone(me.displayTimezone);
        setZoneKnown((n) => n + 1);
      },
      () => setUserZone(null),
    );
    return () => {
      current = false;
    };
  }, [api, token, scope.tenant, scope.project]);

  if (token === '') {
    return (
      <Login
        notice={notice}
        onToken={(value) => {
          saveToken(value);
          setNotice('');
          setToken(value);
        }}
      />
    );
  }

  let view: preact.JSX.Element;
  switch (route.view) {
    case 'list':
      view = <ListView api={api} scope={scope} />;
      break;
    case 'new':
      view = <EditorView key="new" api={api} scope={scope} name={undefined} />;
      break;
    case 'edit':
      view = <EditorView key={`edit:${route.name}`} api={api} scope={scope} name={route.name} />;
      break;
    case 'run':
      view = (
        <RunView key={route.id} api={api} scope={scope} scheduler={route.name} correlationId={route.id} />
      );
      break;
    case 'process':
      view = <ProcessView key={route.id} api={api} scope={scope} scheduler={route.name} id={route.id} />;
      break;
    case 'session':
      view = <SessionView key={route.id} api={api} scope={scope} scheduler={route.name} id={route.id} />;
      break;
    case 'inbox':
      view = <InboxView api={api} tenant={route.tenant} />;
      break;
    case 'trash':
      view = <TrashView api={api} scope={scope} />;
      break;
    case 'recipe':
      view = <RecipeView key={route.name} api={api} scope={scope} name={route.name} />;
      break;
  }

  return (
    <>
      <a class="skip" href="#main" ref={skipLink}>
        Skip to content
      </a>
      <header class="top">
        <p class="brand">
          <a href={routeHash({ view: 'list', ...scope })}>Ursa</a>
        </p>
        <ScopePicker scope={scope} inbox={route.view === 'inbox'} />
        <nav aria-label="Views">
          <a
            href={routeHash({ view: 'list', ...scope })}
            aria-current={route.view === 'inbox' ? undefined : 'page'}
          >
            Schedulers
          </a>
          <a
            href={routeHash({ view: 'inbox', ...scope })}
            aria-current={route.view === 'inbox' ? 'page' : undefined}
          >
            Inbox
          </a>
          <ZoneToggle
            choice={zone}
            onChange={(next) => {
              setZoneChoice(next);
              setZone(next);
            }}
          />
          <button type="button" class="link" onClick={() => signOut()}>
            Sign out
          </button>
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        {view}
      </main>
    </>
  );
}
