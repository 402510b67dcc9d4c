// Package git is clawhost's git command plugin, served by cmd/clawhost-git:
// /git shows a chat's repository — status, the diff (inline when short, a
// .diff file when long), the log, the branches — and commits and pushes it,
// from the phone. It works in the directory the host names for the chat
// (command.Request.Workdir): the chat's own worktree when its agent has
// worktrees = true, else the agent's workspace.
//
// # Configuration
//
//	plugin "git" {
//	  source = "git"
//	  config {
//	    remote       = "/srv/git/project.git" # where Push goes; "" (the default): no Push
//	    author_name  = "clawhost"             # the commits' author and committer
//	    author_email = "clawhost@localhost"
//	    # inline_limit = 3000   # a longer diff is sent as a .diff file
//	    # git = "git"           # the git program
//	  }
//	}
//
// # Who and what
//
// Only owners and members (access.owners, access.members, a group block's
// members) may use /git; everyone else is told so. Commit stages every change
// (git add -A) and commits it with the message typed after /git commit;
// /git commit alone offers a button that asks the agent to draft one. Push
// sends the current branch to the configured remote under the same name,
// never forced.
//
// # Safety
//
// The directory is one the chat's agent writes, from inside its sandbox: its
// .git/config, hooks and .gitattributes are not the operator's. Every git the
// plugin runs goes through sdk/safegit, which runs none of the programs they
// name (hooks, fsmonitor, filters, textconv, external diff, pager, editor,
// gpg, credential and ssh helpers, a remote's receive-pack), allows only the
// file, https and ssh transports (GIT_ALLOW_PROTOCOL), and gives git the
// repository rather than let it follow a .git file or a link to another
// agent's (such a directory is refused). A push is refused when the
// repository redefines the remote (remote.<remote>.*) or rewrites URLs
// (url.*.insteadOf), which could send it elsewhere or run a program.
package git
