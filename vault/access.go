package vault

import "github.com/promptcanvas/promptcanvas/canvas"

// reachFile returns nil when the principal may reach file f. A file belongs
// to its workspace, not to a canvas or a project, so a project-restricted
// principal reaches only the files it uploaded itself (FORBIDDEN
// otherwise); any other principal of the workspace reaches them all.
func reachFile(p *canvas.Principal, f *File) error {
	if p.Restricted() && f.CreatedBy != p.Actor() {
		return canvas.ErrOutsideProjects()
	}
	return nil
}
