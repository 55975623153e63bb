package oauthclient

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/oauth2"
)

// Store keeps the tokens of each server a client signed in to, in a folder:
// one file per key, sealed with AES-256-GCM under a key kept in the folder's
// own file (mode 0600). A copy of the token files alone — a backup, a synced
// folder, a support bundle — gives no usable token.
type Store struct {
	dir string

	mu  sync.Mutex
	key []byte
}

// OpenStore returns the store in dir, creating it (mode 0700) and its key.
func OpenStore(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &Store{dir: dir}, nil
}

// Saved is what is kept of a sign-in: the client it used, where it
// refreshes, and its newest token.
type Saved struct {
	ClientID     string        `json:"client_id"`
	ClientSecret string        `json:"client_secret,omitempty"`
	TokenURL     string        `json:"token_url"`
	AuthStyle    int           `json:"auth_style"`
	Token        *oauth2.Token `json:"token"`
}

func (s *Saved) config() *oauth2.Config {
	return &oauth2.Config{ClientID: s.ClientID, ClientSecret: s.ClientSecret,
		Endpoint: oauth2.Endpoint{TokenURL: s.TokenURL, AuthStyle: oauth2.AuthStyle(s.AuthStyle)}}
}

func (s *Store) path(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:12])+".token")
}

// aead is the cipher under the folder's key, made on first use.
func (s *Store) aead() (cipher.AEAD, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key == nil {
		p := filepath.Join(s.dir, "key")
		key, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			key = make([]byte, 32)
			rand.Read(key)
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if errors.Is(err, fs.ErrExist) { // another process made it first
				return s.readKey()
			}
			if err != nil {
				return nil, err
			}
			if _, err := f.Write(key); err != nil {
				f.Close()
				return nil, err
			}
			if err := f.Close(); err != nil {
				return nil, err
			}
		} else if err != nil {
			return nil, err
		}
		if len(key) != 32 {
			return nil, fmt.Errorf("%s is not a key (%d bytes)", p, len(key))
		}
		s.key = key
	}
	block, err := aes.NewCipher(s.key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func (s *Store) readKey() (cipher.AEAD, error) {
	key, err := os.ReadFile(filepath.Join(s.dir, "key"))
	if err != nil {
		return nil, err
	}
	if len(key) != 32 {
		return nil, errors.New("the token key is being written: try again")
	}
	s.key = key
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Save keeps v under key, replacing what was kept, atomically.
func (s *Store) Save(key string, v *Saved) error {
	a, err := s.aead()
	if err != nil {
		return err
	}
	plain, err := json.Marshal(v)
	if err != nil {
		return err
	}
	nonce := make([]byte, a.NonceSize())
	rand.Read(nonce)
	sealed := a.Seal(nonce, nonce, plain, []byte(key))
	tmp, err := os.CreateTemp(s.dir, ".token-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(sealed); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path(key))
}

// Load returns what is kept under key, or nil when nothing is.
func (s *Store) Load(key string) (*Saved, error) {
	sealed, err := os.ReadFile(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	a, err := s.aead()
	if err != nil {
		return nil, err
	}
	if len(sealed) < a.NonceSize() {
		return nil, errors.New("the token file is cut short")
	}
	plain, err := a.Open(nil, sealed[:a.NonceSize()], sealed[a.NonceSize():], []byte(key))
	if err != nil {
		return nil, errors.New("the token file does not open with this folder's key")
	}
	var v Saved
	if err := json.Unmarshal(plain, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// Forget removes what is kept under key.
func (s *Store) Forget(key string) error {
	err := os.Remove(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
