const { rmSync } = require('fs');
const { task, src, dest } = require('gulp');

// Whatever is in dist is published: files of modules that were moved or removed must not linger.
task('clean', (done) => {
	rmSync('dist', { recursive: true, force: true });
	done();
});

// Nodes and the credential reference their icons as `file:` paths relative to their built .js file
// (e.g. `file:../../icons/productDataIntegration.svg`), so the folder lands in dist as it is.
task('build:icons', () => src('icons/*.svg').pipe(dest('dist/icons')));
