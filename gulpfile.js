const { task, src, dest } = require('gulp');

// Nodes and the credential reference their icons as `file:` paths relative to their built .js file
// (e.g. `file:../../icons/productDataIntegration.svg`), so the folder lands in dist as it is.
task('build:icons', () => src('icons/*.svg').pipe(dest('dist/icons')));
