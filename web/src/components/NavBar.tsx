import MenuIcon from '@mui/icons-material/Menu';
import AppBar from '@mui/material/AppBar';
import Avatar from '@mui/material/Avatar';
import Box from '@mui/material/Box';
import IconButton from '@mui/material/IconButton';
import Toolbar from '@mui/material/Toolbar';
import Typography from '@mui/material/Typography';
import { Suspense, lazy, useId, useState } from 'react';
import { useNavigate } from 'react-router';
import { MESSAGES } from '@portal/contracts';
import { useLogOut } from '../auth/useLogOut';
import { useCurrentUser } from '../auth/useCurrentUser';
import { usePublicConfig } from '../config/usePublicConfig';
import { useNotify } from '../notifications/notify-context';
import { LOGO_URL, navigationPictureOf } from './pictures';

const NavMenu = lazy(() => import('./NavMenu'));

/**
 * Logo, the user's picture (to /user) and the menu. A participant who has not watched the
 * onboarding video is locked out: the menu is disabled and both controls say why.
 */
export function NavBar() {
  const { user } = useCurrentUser();
  const { data: config } = usePublicConfig();
  const navigate = useNavigate();
  const { logOut, warning } = useLogOut();
  const notify = useNotify();
  const menuId = useId();
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  // The menu's code loads at the first sign the user is going for it (pointer over or down on
  // the button, keyboard focus): a page that is only read never downloads it, and by the click
  // that opens the menu the small chunk is usually there.
  const [menuWanted, setMenuWanted] = useState(false);
  const wantMenu = () => setMenuWanted(true);
  const locked = user !== null && !user.video_watched;

  const warnLocked = () => notify({ message: MESSAGES.mustWatchVideo, severity: 'warning' });

  return (
    <AppBar position="sticky" color="primary" elevation={0} component="header">
      <Toolbar sx={{ gap: 1, minHeight: { xs: 60 } }}>
        <Box component="img" src={LOGO_URL} alt="" width={36} height={36} sx={{ flexShrink: 0 }} />
        <Typography component="span" variant="h3" noWrap sx={{ flexGrow: 1, fontSize: { xs: '1.05rem', sm: '1.25rem' } }}>
          {config?.productName ?? ''}
        </Typography>
        <IconButton
          aria-label={user ? `${user.username}: your profile` : 'Your profile'}
          onClick={() => (locked ? warnLocked() : navigate('/user'))}
          sx={{ p: 0.5 }}
        >
          <Avatar src={navigationPictureOf(user)} alt="" sx={{ width: 40, height: 40, bgcolor: 'grey.300' }} />
        </IconButton>
        <Box
          component="span"
          data-testid="menu-area"
          onClick={locked ? warnLocked : undefined}
          sx={{ opacity: locked ? 0.5 : 1, display: 'inline-flex', cursor: locked ? 'not-allowed' : undefined }}
        >
          <IconButton
            color="inherit"
            aria-label="Menu"
            aria-haspopup="menu"
            aria-controls={anchor ? menuId : undefined}
            aria-expanded={anchor ? 'true' : undefined}
            disabled={locked}
            onPointerEnter={wantMenu}
            onPointerDown={wantMenu}
            onFocus={wantMenu}
            onClick={(event) => {
              wantMenu();
              setAnchor(event.currentTarget);
            }}
            edge="end"
          >
            <MenuIcon fontSize="large" />
          </IconButton>
        </Box>
      </Toolbar>
      {menuWanted ? (
        <Suspense fallback={null}>
          <NavMenu
            id={menuId}
            anchor={locked ? null : anchor}
            onClose={() => setAnchor(null)}
            user={user}
            productName={config?.productName}
            spyOnUrl={config?.spyOnUrl}
            onLogout={logOut}
          />
        </Suspense>
      ) : null}
      {warning}
    </AppBar>
  );
}
